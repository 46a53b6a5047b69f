import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import Testing
@testable import ID3Meter
import ID3MeterCore
import ID3MeterServe
import Prometheus
import SampleGenerator

/// Records as the line-up writes them, kept for the test to read.
final class CollectedRecords: MeterOutput {
    private let records = Mutex<[MeterRecord]>([])
    func write(_ record: MeterRecord) { records.withLock { $0.append(record) } }
    func finish() async {}
    var all: [MeterRecord] { records.withLock { $0 } }
}

/// A line-up metering channels of a local `LineupServer`, its records and series kept for the test.
struct RunningLineup {
    let lineup: Lineup
    let collected = CollectedRecords()
    let registry = PrometheusCollectorRegistry()

    /// Starts `names` of `server`, each alerting after `alertAfter` seconds; their streams end
    /// (`ServeTests.channel`), so they are configured `vod`: ended, not opened again.
    init(_ names: [String], of server: LineupServer, alertAfter: Double = 2) async throws {
        try await self.init(channels: Dictionary(uniqueKeysWithValues: names.map { ($0, server.url($0)) }), alertAfter: alertAfter)
    }

    /// Starts a channel of each name and URL.
    init(channels: [String: String], alertAfter: Double = 2) async throws {
        try await self.init(config: try LineupConfig.parse((["defaults: {alert_after: \(alertAfter), vod: true}", "channels:"]
            + channels.sorted { $0.key < $1.key }.map { "  - {name: \($0.key), url: \"\($0.value)\"}" })
            .joined(separator: "\n"), file: "lineup.yaml"))
    }

    /// Starts the channels of `config`.
    init(config: LineupConfig, fetcher: Fetcher = Fetcher(ioTimeout: .seconds(5), retry: Samples.quickRetry)) async throws {
        lineup = Lineup(fetcher: fetcher, output: OutputSet([collected]),
                        logger: Logger(label: "serve-test"), metrics: PrometheusMetricsFactory.lineup(registry: registry))
        await lineup.apply(config)
    }

    /// The deliveries of `channel`, in order.
    func deliveries(_ channel: String) -> [Stamped<MeterRecord.Delivery>] { collected.all.of(channel).deliveries }

    /// The records of `channel`, in order.
    func records(_ channel: String) -> [MeterRecord] { collected.all.of(channel) }

    /// The alerts of `channel`, in order.
    func alerts(_ channel: String) -> [Stamped<MeterRecord.Alert>] { collected.all.of(channel).alerts }

    /// Waits, looking every 50 ms, until `done` holds of the statuses or `seconds` pass; the
    /// last statuses seen, and whether `done` held.
    func statuses(within seconds: Int = 60, until done: ([ChannelStatus]) -> Bool) async throws -> (statuses: [ChannelStatus], done: Bool) {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            let statuses = await lineup.statuses
            if done(statuses) { return (statuses, true) }
            try await Task.sleep(for: .milliseconds(50))
        }
        return (await lineup.statuses, false)
    }

    var metrics: [String: Double] { ServeCommandTests.samples(registry.emitToString()) }
}

/// `serve`'s line-up against a real local server of several live channels.
@Suite("serve: a line-up in one process", .serialized, .timeLimit(.minutes(3)))
struct ServeTests {
    static func channel(seed: UInt64, untagged: Range<Int> = 0..<0, gaps: Range<Int> = 0..<0, placeholder: Range<Int> = 0..<0,
                        tagInterval: Double = 0.5, segments: Int = 14) -> LiveChannel {
        LiveChannel(preroll: 3) { date in
            var stream = LiveStream(segmentDuration: 1, tagInterval: tagInterval, windowSize: 6, segmentCount: segments, startDate: date)
            stream.seed = seed
            stream.untagged = untagged
            stream.gaps = gaps
            stream.placeholder = placeholder
            return stream
        }
    }

    @Test func eachChannelDeliversItsOwnTagsOnceAndTagLossAlerts() async throws {
        let server = try LineupServer(["a": Self.channel(seed: 1), "b": Self.channel(seed: 2),
                                       "gap": Self.channel(seed: 3, untagged: 6..<10)])
        defer { server.stop() }
        let running = try await RunningLineup(["a", "b", "gap", "dead"], of: server)
        let (statuses, ended) = try await running.statuses { $0.filter { $0.state == .ended }.map(\.name) == ["a", "b", "gap"] }
        await running.lineup.removeAll()
        #expect(ended, "\(statuses)")

        func deliveries(_ channel: String) -> [Stamped<MeterRecord.Delivery>] { running.deliveries(channel) }
        // Tag-loss alerts; these streams' tags come every 0.5 s, which the QA checks flag apart.
        func alerts(_ channel: String) -> [Stamped<MeterRecord.Alert>] { running.alerts(channel).filter { $0.name != "failing_checks" } }
        // Each channel gets exactly its own stream's tags from where it joined, once, in order.
        for name in ["a", "b", "gap"] {
            let live = try #require(server.channels[name])
            let join = try #require(live.joinSegment(back: 3))
            #expect(deliveries(name).compactMap(\.payload) == live.owners(from: join), "\(name)")
        }
        #expect(Set(deliveries("a").compactMap(\.payload)).isDisjoint(with: deliveries("b").compactMap(\.payload)))
        // Tags 0.5 s apart are past the Validator's tag-duration tolerance.
        #expect(running.alerts("a").contains { $0.name == "failing_checks" && $0.message == "failing the QA checks tag_duration" })

        // No alert while tags flowed.
        let lastOfA = try #require(deliveries("a").last?.sentAt)
        #expect(alerts("a").filter { $0.sentAt <= lastOfA }.isEmpty, "\(alerts("a"))")

        // The channel whose tags stopped for 4 s alerted 2 s after the last one (within a second)
        // and stopped alerting with the first tag back.
        let gapAlerts = alerts("gap")
        let start = try #require(gapAlerts.first { $0.active })
        #expect(start.name == "no_tags")
        let before = try #require(deliveries("gap").last { $0.sentAt < start.sentAt })
        #expect(start.sentAt - before.sentAt >= 2 && start.sentAt - before.sentAt <= 3, "\(start.sentAt - before.sentAt) s")
        let end = try #require(gapAlerts.first { !$0.active })
        let back = try #require(deliveries("gap").first { $0.sentAt > start.sentAt })
        #expect(end.name == "no_tags" && abs(end.sentAt - back.sentAt) < 0.1)

        // The channel that never answered said so at its first attempt, with the reason (what a
        // collector's report names a gap by), alerted no_tags from the start, and is being tried again.
        #expect(deliveries("dead").isEmpty)
        let unreadable = try #require(alerts("dead").first)
        #expect(unreadable.name == "stream_unreadable" && unreadable.active, "\(alerts("dead"))")
        #expect(unreadable.message?.hasPrefix("the stream could not be opened: ") == true && unreadable.message != "the stream could not be opened: no reason given",
                "\(unreadable)")
        #expect(alerts("dead").contains { $0.name == "no_tags" && $0.active })
        let dead = try #require(statuses.first { $0.name == "dead" })
        #expect(dead.state == .failed && dead.restarts >= 1 && dead.alerts == [.noTags, .streamUnreadable], "\(dead)")
    }
}

extension ServeTests {
    /// A channel whose server starts answering 404 mid-run alerts within `alert_after` + 1 s;
    /// the other channel's deliveries go on, all of them, on time.
    @Test func aChannelKilledMidRunAlertsAndTheOthersKeepTheirPace() async throws {
        let server = try LineupServer(["a": Self.channel(seed: 1), "k": Self.channel(seed: 4)])
        defer { server.stop() }
        let running = try await RunningLineup(["a", "k"], of: server)
        _ = try await running.statuses { _ in running.deliveries("k").count >= 3 }
        server.kill("k")
        let killedAt = Date().timeIntervalSince1970
        func noTagsAlert() -> Stamped<MeterRecord.Alert>? { running.alerts("k").first { $0.name == "no_tags" && $0.active } }
        _ = try await running.statuses { statuses in noTagsAlert() != nil && statuses.first { $0.name == "a" }?.state == .ended }
        let metrics = running.metrics
        await running.lineup.removeAll()

        let lastOfK = try #require(running.deliveries("k").last?.sentAt)
        let alert = try #require(noTagsAlert())
        #expect(alert.sentAt - lastOfK >= 2 && alert.sentAt - lastOfK <= 3, "alerted \(alert.sentAt - lastOfK) s after k's last tag")
        // What k had buffered (three 1 s segments, its join) still played.
        #expect(lastOfK <= killedAt + 4)
        // Its playlist answers 404 too: unreachable, in words, not stale (issue 55).
        #expect(running.alerts("k").contains { $0.name == "playlist_unreachable" && $0.active && $0.message?.contains("404") == true },
                "\(running.alerts("k"))")
        #expect(!running.alerts("k").contains { $0.name == "playlist_stale" })

        let a = try #require(server.channels["a"])
        #expect(running.deliveries("a").compactMap(\.payload) == a.owners(from: try #require(a.joinSegment(back: 3))))
        // Every delivery of a is in its pacing histogram, none late by a quarter of a second: a
        // bound loose enough for a loaded machine (`make bench-fleet` measures the real spread).
        let count = try #require(metrics[#"id3meter_pacing_error_seconds_count{channel="a"}"#])
        #expect(count == Double(running.deliveries("a").count))
        #expect(metrics[#"id3meter_pacing_error_seconds_bucket{channel="a",le="0.25"}"#] == count, "\(metrics.filter { $0.key.contains("pacing") })")
    }
}

extension ServeTests {
    /// A channel whose server trickles its segments (a byte every 0.1 s, never done) holds
    /// nothing of the others': they deliver every tag, on time, while it alerts.
    @Test func aTricklingChannelDelaysNoOther() async throws {
        let server = try LineupServer(["a": Self.channel(seed: 1), "h": Self.channel(seed: 5)]) { channel, request in
            guard channel == "h", request.path.hasSuffix(".ts") else { return nil }
            return LocalHTTPServer.Response(body: [0x47], length: .claimed(1 << 20)) { send in
                while send([0]) { Thread.sleep(forTimeInterval: 0.1) }
            }
        }
        defer { server.stop() }
        let running = try await RunningLineup(["a", "h"], of: server)
        _ = try await running.statuses { $0.first { $0.name == "a" }?.state == .ended }
        let metrics = running.metrics
        await running.lineup.removeAll()

        let records = running.collected.all
        let a = try #require(server.channels["a"])
        let sendsOfA = records.of("a").deliveries
        #expect(sendsOfA.compactMap(\.payload) == a.owners(from: try #require(a.joinSegment(back: 3))))
        #expect(metrics[#"id3meter_pacing_error_seconds_bucket{channel="a",le="0.25"}"#] == Double(sendsOfA.count))
        #expect(records.of("h").deliveries.isEmpty)
        #expect(records.of("h").alerts.contains { $0.name == "no_tags" && $0.active })
    }
}

/// `id3-meter serve CONFIG` as an operator runs it.
@Suite("id3-meter serve", .serialized, .timeLimit(.minutes(3)))
struct ServeCommandTests {
    /// Reads JSON lines from `pipe` until one satisfies `done`; every line read is kept.
    @Test func aBadConfigIsNamedByLineAndNothingStarts() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("lineup.yaml").path
        try Data("channels:\n  - name: a\n    url: http://127.0.0.1:9/a.m3u8\n    fps: fast\n".utf8).write(to: URL(fileURLWithPath: path))
        let result = try Command.run(["serve", path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(path):4:channels[0].fps: must be a number from 1 to 300"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// SIGHUP adds the channel the file gained and leaves the other running, then ends the one
    /// the file lost; SIGTERM ends the rest (end() called on each) and exits 0.
    @Test func sighupAddsAndRemovesChannelsAndSigtermEndsEveryOne() throws {
        let server = try LineupServer(["a": ServeTests.channel(seed: 1), "b": ServeTests.channel(seed: 2)])
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("lineup.yaml").path
        let one = "channels:\n  - {name: a, url: \"\(server.url("a"))\"}\n"
        try Data(one.utf8).write(to: URL(fileURLWithPath: path))
        let (process, out, _) = try Command.launch(["serve", path, "--listen", "127.0.0.1:0", "--meter", "meter-0"])
        defer { if process.isRunning { process.terminate() } }
        let reader = RecordReader(out)
        reader.read { $0["type"] as? String == "send_id3" }
        #expect(reader.records.last?["channel"] as? String == "a")

        try Data((one + "  - {name: b, url: \"\(server.url("b"))\"}\n").utf8).write(to: URL(fileURLWithPath: path))
        kill(process.processIdentifier, SIGHUP)
        reader.read { $0["type"] as? String == "send_id3" && $0["channel"] as? String == "b" }
        #expect(reader.records.last?["channel"] as? String == "b", "SIGHUP started channel b")

        try Data("channels:\n  - {name: b, url: \"\(server.url("b"))\"}\n".utf8).write(to: URL(fileURLWithPath: path))
        kill(process.processIdentifier, SIGHUP)
        reader.read { $0["event"] as? Int == 2002 }
        #expect(reader.records.last?["channel"] as? String == "a", "SIGHUP ended channel a")
        reader.read { $0["type"] as? String == "send_id3" }
        #expect(reader.records.last?["channel"] as? String == "b", "channel b goes on")

        kill(process.processIdentifier, SIGTERM)
        reader.read { _ in false }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let starts = reader.records.filter { $0["event"] as? Int == 2001 }.compactMap { $0["channel"] as? String }
        let ends = reader.records.filter { $0["event"] as? Int == 2002 }.compactMap { $0["channel"] as? String }
        #expect(starts.sorted() == ["a", "b"], "channel a was not started again by SIGHUP")
        #expect(ends.sorted() == ["a", "b"])
        // Every record names the meter that wrote it, as --meter says.
        #expect(!reader.records.isEmpty && reader.records.allSatisfy { $0["meter"] as? String == "meter-0" }, "\(reader.records.filter { $0["meter"] as? String != "meter-0" }.prefix(2))")
    }

    /// This machine's name without its domain: what serve names itself without --meter.
    static let hostName = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? ""

    /// Reads a serve process's stderr until it says where its API listens (`--listen ...:0`);
    /// the address, and the log read so far.
    static func apiAddress(from stderr: Pipe) -> (address: String?, log: String) {
        var log = ""
        while !log.contains("API on http"), case let chunk = stderr.fileHandleForReading.availableData, !chunk.isEmpty {
            log += String(decoding: chunk, as: UTF8.self)
        }
        let address = log.firstMatch(of: /API on (https?:\/\/[0-9.]+:[0-9]+)/).map { String($0.output.1) }
        return (address, log)
    }

    static func request(_ method: String, _ url: String, body: String? = nil) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        request.timeoutInterval = 10
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// Prometheus text: each sample's value by its name and labels as written.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    @Test func theAPIListsAddsAndEndsChannelsAndItsMetricsMatchTheRecords() async throws {
        let server = try LineupServer(["a": ServeTests.channel(seed: 1), "b": ServeTests.channel(seed: 2)])
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("lineup.yaml").path
        try Data("api_hosts: [127.0.0.1]\ndefaults: {alert_after: 30}\nchannels:\n  - {name: a, url: \"\(server.url("a"))\", vod: true}\n".utf8)
            .write(to: URL(fileURLWithPath: path))
        let (process, out, err) = try Command.launch(["serve", path, "--listen", "127.0.0.1:0"])
        defer { if process.isRunning { process.terminate() } }
        let api = try #require(Self.apiAddress(from: err).address)

        #expect(try await Self.request("GET", "\(api)/healthz") == (200, "ok\n"))
        let bad = try await Self.request("PUT", "\(api)/channels/b", body: #"{"name": "b", "url": "http://x/b.m3u8", "fps": "fast"}"#)
        #expect(bad.status == 400 && bad.body.contains("PUT /channels/b:1:fps: must be a number"), "\(bad)")
        let put = try await Self.request("PUT", "\(api)/channels/b", body: #"{"name": "b", "url": "\#(server.url("b"))"}"#)
        #expect(put.status == 201, "\(put)")

        let reader = RecordReader(out)
        // Channel a's stream ends (EXT-X-ENDLIST, and it is configured vod): its end() comes once every tag is delivered.
        reader.read { $0["event"] as? Int == 2002 && $0["channel"] as? String == "a" }
        let channels = try await Self.request("GET", "\(api)/channels")
        let view = try #require(try JSONSerialization.jsonObject(with: Data(channels.body.utf8)) as? [String: Any])
            let listed = try #require(view["channels"] as? [[String: Any]])
        #expect(listed.compactMap { $0["name"] as? String } == ["a", "b"])
        #expect(view["shard"] == nil, "not sharded")
        #expect(listed.first?["state"] as? String == "ended")
        let sendsOfA = reader.records.filter { $0["type"] as? String == "send_id3" && $0["channel"] as? String == "a" }
        #expect(listed.first?["delivered"] as? Int == sendsOfA.count)

        let metrics = Self.samples(try await Self.request("GET", "\(api)/metrics").body)
        #expect(metrics[#"id3meter_tags_delivered_total{channel="a"}"#] == Double(sendsOfA.count), "\(metrics)")
        #expect(metrics[#"id3meter_tags_invalid_total{channel="a"}"#] == 0)
        #expect(metrics[#"id3meter_channel_alert{channel="a",alert="no_tags"}"#] == 0)
        #expect(metrics[#"id3meter_segments_failed_total{channel="b"}"#] == 0)
        #expect((metrics["process_resident_memory_bytes"] ?? 0) > 1_000_000)

        #expect(try await Self.request("DELETE", "\(api)/channels/b").status == 204)
        #expect(try await Self.request("DELETE", "\(api)/channels/b").status == 404)
        // DELETE answers once the channel has ended (its last records written): its series are gone.
        let after = Self.samples(try await Self.request("GET", "\(api)/metrics").body)
        #expect(after[#"id3meter_tags_delivered_total{channel="b"}"#] == nil, "an ended channel's series go")

        kill(process.processIdentifier, SIGTERM)
        reader.read { _ in false }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        // Read to the end, not waited for: b's stream is as long as a's and began a moment later,
        // so its end may come before a's or by the DELETE; and b, live, is opened again after its
        // EXT-X-ENDLIST, each opening a session of its own. Every session b started has ended.
        let sessionsOfB = { (code: Int) in reader.records.filter { $0["event"] as? Int == code && $0["channel"] as? String == "b" }.count }
        #expect(sessionsOfB(2002) >= 1 && sessionsOfB(2002) == sessionsOfB(2001), "starts \(sessionsOfB(2001)), ends \(sessionsOfB(2002))")
        // Without --meter, every record names the host (in Kubernetes, the pod), the audit trail's too.
        let host = Self.hostName
        #expect(reader.records.contains { $0["type"] as? String == "config_change" })
        #expect(reader.records.allSatisfy { $0["meter"] as? String == host }, "\(reader.records.filter { $0["meter"] as? String != host }.prefix(2))")
        // A delivery's tag_id is its payload's.
        let send = try #require(reader.records.first { $0["type"] as? String == "send_id3" })
        #expect(send["tag_id"] as? String == TagIdentity.of(payload: send["payload"] as? String ?? ""))
    }
}
