import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Testing
import ID3MeterReport
import SampleGenerator
@testable import ID3Meter
@testable import ID3MeterServe

/// `id3-meter collect`, the other end of docs/COLLECTOR.md, as real processes: each batch kept
/// once, each delivery once per (channel, tag_id), committed before it is answered, whatever
/// the meters, the collector or its disk do.
@Suite("collect: records kept once", .serialized, .timeLimit(.minutes(3)))
struct CollectTests {
    /// A running `id3-meter collect` on an SQLite file.
    final class RunningCollector {
        let process: Process
        let port: Int
        var url: String { "http://127.0.0.1:\(port)/records" }

        init(database: String, port: Int = 0, extra: [String] = []) throws {
            let (process, _, err) = try Command.launch(["collect", "--database", database, "--listen", "127.0.0.1:\(port)"] + extra)
            self.process = process
            var log = ""
            while !log.contains("collecting on"), case let chunk = err.fileHandleForReading.availableData, !chunk.isEmpty {
                log += String(decoding: chunk, as: UTF8.self)
            }
            guard let found = log.firstMatch(of: /collecting on http:\/\/127\.0\.0\.1:([0-9]+)/).flatMap({ Int($0.output.1) }) else {
                process.terminate()
                throw TestFailure("collect did not start (\(database)): \(log)")
            }
            self.port = found
        }

        func stop(_ signal: Int32 = SIGTERM) {
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
        }

        deinit { if process.isRunning { process.terminate() } }
    }

    static func post(_ body: String, to url: String, headers: [String: String] = [:]) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        request.timeoutInterval = 10
        headers.forEach { request.setValue($1, forHTTPHeaderField: $0) }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// A batch of `meter`'s deliveries of `payloads` on `channel`, as a meter posts it.
    static func batch(_ id: String, meter: String, channel: String = "news", payloads: [String], from first: Int = 0) -> String {
        let records = payloads.enumerated().map { index, payload in
            var record = MeterRecord.delivery(payload, context: TagContext(pts: Int64(index), origin: TagOrigin(source: "s"), programDateTime: nil),
                                              at: Date(timeIntervalSince1970: 1_795_000_000 + Double(first + index)))
            record.channel = channel
            record.meter = meter
            return String(decoding: record.jsonLine, as: UTF8.self)
        }
        return #"{"batch":"\#(id)","meter_version":"0.12.0","records":[\#(records.joined(separator: ","))]}"#
    }

    /// What the database holds, read as the report will.
    static func kept(in database: String) async throws -> [MeterRecord] {
        let logger = Logger(label: "test")
        let store: any RecordStore = database.hasPrefix("postgres://")
            ? try await PostgresRecordStore.open(url: database, logger: logger) : try await SQLiteRecordStore.open(path: database, logger: logger)
        let records = try await store.records(channel: nil, from: 0, to: .greatestFiniteMagnitude)
        await store.close()
        return records
    }

    @Test func eachBatchOnceEachDeliveryOncePerChannelAndTagAndTheContractsAnswers() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await contract(database: folder.appendingPathComponent("records.db").path)
    }

    /// A channel's span is written once a minute (`ChannelSpanWrites`); the last time heard of it
    /// within the minute is written when the collector stops: the database says when it was last
    /// heard of, to the record.
    @Test func aChannelsLastTimeIsKeptToTheRecordThoughWrittenByTheMinute() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await lastTimeKept(database: folder.appendingPathComponent("spans.db").path)
    }

    @Test(.enabled(if: TestPostgres.requested != nil, Comment(rawValue: TestPostgres.why)))
    func aChannelsLastTimeIsKeptOnPostgreSQLToo() async throws {
        try await lastTimeKept(database: try TestPostgres.empty())
    }

    private func lastTimeKept(database: String) async throws {
        let onPostgreSQL = database.hasPrefix("postgres://")
        let collector = try RunningCollector(database: database)
        // Three batches of ten deliveries, 20–29, 30–39 and 40–49 s after 1_795_000_000: one
        // minute (1_795_000_020 to 1_795_000_080), so the channel is written at the first alone.
        var factory = NielsenTagFactory(seed: 700)
        let payloads = (0..<30).map { factory.owner(secondsIntoDay: 3_600 + $0) }
        for round in 0..<3 {
            let body = Self.batch("spans-\(round)", meter: "m", payloads: Array(payloads[(round * 10)..<(round * 10 + 10)]), from: 20 + round * 10)
            let answer = try await Self.post(body, to: collector.url)
            #expect(answer.status == 200, "\(answer.body)")
        }
        collector.stop()
        let store: any CoverageReading & RecordStore = onPostgreSQL
            ? try await PostgresRecordStore.openForReading(url: database, logger: Logger(label: "test"))
            : try await SQLiteRecordStore.openForReading(path: database, logger: Logger(label: "test"))
        let spans = try await store.channels()
        await store.close()
        #expect(spans.map(\.channel) == ["news"] && spans.first?.firstAt == 1_795_000_020 && spans.first?.lastAt == 1_795_000_049, "\(spans)")
    }

    @Test(.enabled(if: TestPostgres.requested != nil, Comment(rawValue: TestPostgres.why)))
    func theSameOnPostgreSQL() async throws {
        try await contract(database: try TestPostgres.empty())
    }

    /// Issue 56: a redundant pair's meters post at the same moments, their batches over the
    /// same channels. Eight posters at once (four pairs), each batch 200 deliveries over 100
    /// channels in an order of its own, the pair's two batches the same tags: on PostgreSQL,
    /// every batch is answered 200 the first time (two transactions that took the same
    /// channels' rows in different orders deadlocked: 40P01, answered 503), and each tag is kept
    /// once.
    @Test(.enabled(if: TestPostgres.requested != nil, Comment(rawValue: TestPostgres.why)))
    func concurrentPairsOverTheSameChannelsNeverDeadlock() async throws {
        let database = try TestPostgres.empty()
        let collector = try RunningCollector(database: database)
        func batch(pair: Int, meter: String, round: Int) -> String {
            var generator = SeededRandom(seed: UInt64(pair * 1_000 + round * 10 + (meter == "a" ? 1 : 2)))
            let records = (0..<200).map { index in
                var record = MeterRecord.delivery("www.nielsen.com/pair\(pair)/round\(round)/\(index)",
                                                  context: TagContext(pts: Int64(index), origin: TagOrigin(source: "s"), programDateTime: nil),
                                                  at: Date(timeIntervalSince1970: 1_795_000_000 + Double(round * 200 + index)))
                (record.channel, record.meter) = ("ch\(index % 100)", "pair\(pair)-\(meter)")
                return String(decoding: record.jsonLine, as: UTF8.self)
            }.shuffled(using: &generator)
            return #"{"batch":"pair\#(pair)-\#(meter)-\#(round)","records":[\#(records.joined(separator: ","))]}"#
        }
        let url = collector.url
        var statuses: [Int] = []
        for round in 0..<4 {
            statuses += try await withThrowingTaskGroup(of: Int.self) { group in
                for pair in 0..<4 {
                    for meter in ["a", "b"] {
                        let body = batch(pair: pair, meter: meter, round: round)
                        group.addTask { try await Self.post(body, to: url).status }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        collector.stop()
        #expect(statuses.count == 32 && statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        let kept = try await Self.kept(in: database).compactMap(\.delivery?.payload)
        #expect(kept.count == 4 * 4 * 200 && Set(kept).count == kept.count, "\(kept.count) kept")
    }

    /// Batches of one meter's channel minute stored at once (two collectors fed under one
    /// meter name, or a spool drained in parallel): the minute's coverage counts every delivery
    /// of every batch. The fold read a minute, added to it and wrote it back: the second of
    /// two at once wrote over the first's count.
    @Test(.enabled(if: TestPostgres.requested != nil, Comment(rawValue: TestPostgres.why)))
    func concurrentBatchesOfOneMinuteAllCount() async throws {
        let database = try TestPostgres.empty()
        let collector = try RunningCollector(database: database)
        let url = collector.url
        let minute = 1_795_000_020.0
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for poster in 0..<8 {
                var factory = NielsenTagFactory(seed: UInt64(100 + poster))
                let records = (0..<50).map { index in
                    var record = MeterRecord.delivery(factory.owner(secondsIntoDay: 40_020 + index),
                                                      context: TagContext(pts: Int64(index), origin: TagOrigin(source: "s"), programDateTime: nil),
                                                      at: Date(timeIntervalSince1970: minute + Double(index) * 0.5))
                    (record.channel, record.meter) = ("news", "m")
                    return String(decoding: record.jsonLine, as: UTF8.self)
                }
                let body = #"{"batch":"minute-\#(poster)","records":[\#(records.joined(separator: ","))]}"#
                group.addTask { try await Self.post(body, to: url).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        collector.stop()
        #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        let said = try Command.run(["report", "--database", database, "--day", "2026-11-18", "--time-zone", "UTC", "--format", "json"])
        let report = try JSONDecoder().decode(CoverageReport.self, from: Data(said.stdout.utf8))
        let creditable = report.channels.first { $0.channel == "news" }?.tags.creditable
        #expect(creditable == 400, "every delivery of the eight batches counted: \(String(describing: creditable))")
    }

    func contract(database: String) async throws {
        let collector = try RunningCollector(database: database, extra: ["--max-batch-size", "4K"])
        let first = Self.batch("a-batch-1", meter: "a", payloads: ["www.nielsen.com/1", "www.nielsen.com/2"])
        let kept = try await Self.post(first, to: collector.url, headers: ["Idempotency-Key": "a-batch-1"])
        #expect(kept.status == 200 && kept.body.contains(#""kept":2"#) && kept.body.contains(#""already":false"#), "\(kept)")
        // The meter's resend (a lost answer): 200, not kept again.
        let again = try await Self.post(first, to: collector.url, headers: ["Idempotency-Key": "a-batch-1"])
        #expect(again.status == 200 && again.body.contains(#""already":true"#), "\(again)")
        // The other meter's copy of tag 2, and a tag of its own: only the new one is kept.
        let other = try await Self.post(Self.batch("b-batch-1", meter: "b", payloads: ["www.nielsen.com/2", "www.nielsen.com/3"]), to: collector.url)
        #expect(other.status == 200 && other.body.contains(#""kept":1"#), "\(other)")
        // The same tag on another channel is another viewer's.
        let elsewhere = try await Self.post(Self.batch("b-batch-2", meter: "b", channel: "sport", payloads: ["www.nielsen.com/2"]), to: collector.url)
        #expect(elsewhere.body.contains(#""kept":1"#), "\(elsewhere)")
        // Refused for good (the meter dead-letters or splits): not JSON, a key that is not the
        // batch's, too big.
        #expect(try await Self.post("{not json", to: collector.url).status == 400)
        #expect(try await Self.post(first, to: collector.url, headers: ["Idempotency-Key": "other"]).status == 400)
        // A time no meter makes is refused, not stored where no report could place it.
        let farOff = Self.batch("c-1", meter: "c", payloads: ["www.nielsen.com/far"]).replacingOccurrences(of: #""sent_at":1795000000"#, with: #""sent_at":1e300"#)
        let refused = try await Self.post(farOff, to: collector.url)
        #expect(farOff.contains("1e300") && refused.status == 400 && refused.body.contains("sent_at"), "\(refused)")
        let big = Self.batch("a-batch-2", meter: "a", payloads: (0..<40).map { "www.nielsen.com/big/\($0)" })
        #expect(try await Self.post(big, to: collector.url).status == 413)

        // A crash loses nothing answered: every record is in the file when the process is killed.
        collector.stop(SIGKILL)
        let records = try await Self.kept(in: database)
        let pairs = records.compactMap { record in record.delivery.map { "\(record.channel ?? "") \($0.payload)" } }
        #expect(pairs.sorted() == ["news www.nielsen.com/1", "news www.nielsen.com/2", "news www.nielsen.com/3", "sport www.nielsen.com/2"])
        #expect(records.filter { $0.delivery?.payload == "www.nielsen.com/2" && $0.channel == "news" }.map(\.meter) == ["a"], "the first to arrive")
    }

    /// A record of a kind this version does not know (a later meter's) is kept whole, its
    /// number and nested fields too, and each batch says whose token posted it: read back by
    /// Python's sqlite3, not by our store.
    @Test func aLaterVersionsRecordIsKeptWholeAndTheBatchNamesItsPoster() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tokens = folder.appendingPathComponent("tokens")
        try "meter-7 write token-of-meter-7-0123456789\n".write(to: tokens, atomically: true, encoding: .utf8)
        let database = folder.appendingPathComponent("r.db").path
        let collector = try RunningCollector(database: database, extra: ["--api-tokens", tokens.path])
        let later = #"{"type":"heartbeat","sent_at":1795000000.5,"channel":"news","meter":"m","beats":42,"ok":true,"window":{"from":1,"to":2}}"#
        let body = #"{"batch":"m-1","meter_version":"9.0.0","records":[\#(later)]}"#
        let posted = try APIAccessTests.request("POST", collector.url, authorization: "Bearer token-of-meter-7-0123456789", body: body)
        #expect(posted.status == 200, "\(posted)")
        collector.stop()
        let script = """
            import json, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            print(json.dumps({"record": json.loads(db.execute("SELECT record FROM records").fetchone()[0]),
                              "posted_by": db.execute("SELECT posted_by FROM batches WHERE id = 'm-1'").fetchone()[0]}))
            """
        let read = try Command.run(["-c", script, database], binary: URL(fileURLWithPath: "/usr/bin/python3"))
        let found = try #require(try JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [String: Any], "\(read.stderr)")
        let record = try #require(found["record"] as? [String: Any])
        #expect(record["beats"] as? Int == 42 && record["ok"] as? Bool == true && (record["window"] as? [String: Int])?["to"] == 2, "\(record)")
        #expect(record["type"] as? String == "heartbeat" && record["sent_at"] as? Double == 1_795_000_000.5)
        #expect(found["posted_by"] as? String == "meter-7")
    }

    @Test func postingNeedsAWriteTokenWhenTokensAreSet() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tokens = folder.appendingPathComponent("tokens")
        try "meters write s3cret-meter-token\nreports read s3cret-report-token\n".write(to: tokens, atomically: true, encoding: .utf8)
        let collector = try RunningCollector(database: folder.appendingPathComponent("r.db").path, extra: ["--api-tokens", tokens.path])
        let body = Self.batch("x-1", meter: "a", payloads: ["www.nielsen.com/1"])
        // (A plain socket: URLSession on Linux waits to answer a 401's challenge.)
        #expect(try APIAccessTests.request("POST", collector.url, body: body).status == 401)
        #expect(try APIAccessTests.request("POST", collector.url, authorization: "Bearer s3cret-report-token", body: body).status == 403)
        #expect(try APIAccessTests.request("POST", collector.url, authorization: "Bearer s3cret-meter-token", body: body).status == 200)
        // Without tokens only loopback: a wider listener is refused, saying what it would open.
        let open = try Command.run(["collect", "--database", folder.appendingPathComponent("o.db").path, "--listen", "0.0.0.0:0"])
        #expect(open.status == 1 && open.stderr.contains("--listen 0.0.0.0:0 would let anyone who reaches it post records"), "\(open.stderr)")
        // Probes need none.
        let health = try await URLSession.shared.data(from: try #require(URL(string: "http://127.0.0.1:\(collector.port)/healthz")))
        #expect((health.1 as? HTTPURLResponse)?.statusCode == 200)
    }

    /// collect's help names its own listener (not serve's port, so both run on one host as they
    /// come) and none of serve's API flags; serve keeps them.
    @Test func collectAndServeListenApartAndSayOnlyTheirOwnFlags() throws {
        let collect = try Command.run(["collect", "--help"])
        #expect(collect.status == 0 && collect.stdout.contains("127.0.0.1:9470") && !collect.stdout.contains("9464")
                && !collect.stdout.contains("--api-allow-scheme"), "\(collect.stdout)")
        let serve = try Command.run(["serve", "--help"])
        #expect(serve.status == 0 && serve.stdout.contains("127.0.0.1:9464") && serve.stdout.contains("--api-allow-scheme"), "\(serve.stdout)")
    }

    /// Its disk full, the collector answers 503 (the meter keeps the batch and sends it again) and
    /// keeps nothing of the batch; freed, it takes the resend; killed, it keeps all it answered.
    @Test func aFullDiskIsA503AndNothingAnsweredIsLost() async throws {
        let disk = try SmallDisk(bytes: 4 << 20)
        let database = disk.folder.appendingPathComponent("records.db").path
        let collector = try RunningCollector(database: database)
        let payloads = (0..<20).map { "www.nielsen.com/\($0)/" + String(repeating: "x", count: 200) }
        #expect(try await Self.post(Self.batch("a-1", meter: "a", payloads: Array(payloads[..<10])), to: collector.url).status == 200)
        disk.fill()
        let second = Self.batch("a-2", meter: "a", payloads: Array(payloads[10...]) + (0..<400).map { "www.nielsen.com/pad/\($0)/" + String(repeating: "y", count: 200) })
        let refused = try await Self.post(second, to: collector.url)
        #expect(refused.status == 503, "\(refused)")
        disk.free()
        let taken = try await Self.post(second, to: collector.url)
        #expect(taken.status == 200 && taken.body.contains(#""already":false"#), "the refused batch was not half kept: \(taken)")
        collector.stop(SIGKILL)
        let records = try await Self.kept(in: database)
        #expect(records.count == 20 + 400)
        #expect(Set(records.compactMap(\.delivery?.payload)).isSuperset(of: payloads))
    }

    /// Two real `serve` meters of one line-up post to one collector; meter a is killed mid-run
    /// and started again from its spool, and the collector is killed and started again on its
    /// port while they post. Every tag either meter delivered is kept, once per (channel, tag_id),
    /// and nothing else.
    @Test func twoMetersOneKilledAndTheCollectorRestartedKeepEachTagOnce() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await twoMeters(database: folder.appendingPathComponent("records.db").path, folder: folder)
    }

    @Test(.enabled(if: TestPostgres.requested != nil, Comment(rawValue: TestPostgres.why)))
    func twoMetersAndARestartedCollectorOnPostgreSQL() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await twoMeters(database: try TestPostgres.empty(), folder: folder)
    }

    func twoMeters(database: String, folder: URL) async throws {
        let server = try LineupServer(["news": ServeTests.channel(seed: 1), "sport": ServeTests.channel(seed: 2)])
        defer { server.stop() }
        let tokens = folder.appendingPathComponent("tokens")
        try "meters write meter-token-0123456789\n".write(to: tokens, atomically: true, encoding: .utf8)
        let token = folder.appendingPathComponent("token")
        try "meter-token-0123456789\n".write(to: token, atomically: true, encoding: .utf8)
        var collector = try RunningCollector(database: database, extra: ["--api-tokens", tokens.path])
        let config = try server.writeConfig(in: folder)

        /// A meter and what it says it delivered (its stdout), read as it goes.
        final class Meter {
            let arguments: [String]
            var process: Process
            var readers: [RecordReader] = []
            init(_ arguments: [String]) throws {
                self.arguments = arguments
                let (process, out, _) = try Command.launch(arguments)
                self.process = process
                readers.append(RecordReader(out))
            }
            func restart() throws {
                let (process, out, _) = try Command.launch(arguments)
                self.process = process
                readers.append(RecordReader(out))
            }
            /// (channel, tag_id) of every delivery it wrote, once it has ended.
            var delivered: Set<String> {
                readers.forEach { $0.read { _ in false } }
                return Set(readers.flatMap(\.records).filter { $0["type"] as? String == "send_id3" }
                    .compactMap { record in (record["tag_id"] as? String).map { "\(record["channel"] as? String ?? "") \($0)" } })
            }
        }
        func meter(_ name: String) throws -> Meter {
            try Meter(["serve", config.path, "--listen", "127.0.0.1:0", "--meter", name, "--collector", collector.url,
                       "--collector-token-file", token.path, "--spool", folder.appendingPathComponent("spool-\(name)").path])
        }
        let a = try meter("a"), b = try meter("b")
        defer { [a.process, b.process].forEach { if $0.isRunning { $0.terminate() } } }
        func keptPayloads() async -> [String] { (try? await Self.kept(in: database).compactMap(\.delivery?.payload)) ?? [] }
        func waitForKept(_ done: ([String]) -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while !done(await keptPayloads()) {
                guard ContinuousClock.now < deadline else { throw CancellationError() }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        try await waitForKept { $0.count >= 6 }
        kill(a.process.processIdentifier, SIGKILL)
        a.process.waitUntilExit()
        try a.restart()
        try await waitForKept { $0.count >= 12 }
        // The collector crashes; the meters keep their batches and send them again when it is back.
        let port = collector.port
        collector.stop(SIGKILL)
        try await Task.sleep(for: .seconds(1))
        collector = try RunningCollector(database: database, port: port, extra: ["--api-tokens", tokens.path])
        // Until each stream's last tag is kept (the streams end after 14 s), then each meter is
        // stopped and sends what it holds.
        let lastTags = ["news", "sport"].compactMap { server.channels[$0]?.owners(from: 0).last }
        #expect(lastTags.count == 2)
        try await waitForKept { Set($0).isSuperset(of: lastTags) }
        for meter in [a, b] {
            meter.process.terminate()
            meter.process.waitUntilExit()
            #expect(meter.process.terminationStatus == 0)
        }
        let all = try await Self.kept(in: database)
        let kept = all.filter { $0.delivery != nil }
        let pairs = kept.compactMap { record in record.delivery.map { "\(record.channel ?? "") \($0.tagID)" } }
        #expect(Set(pairs).count == pairs.count, "a (channel, tag_id) kept twice")
        let delivered = a.delivered.union(b.delivered)
        #expect(Set(pairs) == delivered, "kept but not delivered: \(Set(pairs).subtracting(delivered)); delivered but not kept: \(delivered.subtracting(Set(pairs)))")
        #expect(Set(kept.compactMap(\.channel)) == ["news", "sport"] && kept.count >= 40, "\(kept.count) kept")
        // Each meter's account of its own work is kept per meter: every session each started.
        let starts = all.filter { if case .event(let event) = $0.content { event.code == 2001 } else { false } }
        #expect(starts.filter { $0.meter == "a" }.count == 4 && starts.filter { $0.meter == "b" }.count == 2,
                "a: two channels, twice (restarted); b: two channels: \(starts.map { "\($0.meter ?? "") \($0.channel ?? "")" })")

        // The whole path's end: the report of the day reads both channels from what the meters
        // posted, each minute a tag was delivered in credited, and both meters' parts.
        let zone = TimeZone(identifier: "UTC")!
        let day = ReportCalendar(zone: zone).day(of: Date().timeIntervalSince1970)
        let result = try Command.run(["report", "--database", database, "--day", day, "--time-zone", "UTC", "--format", "json"])
        try #require(result.status == 0, "\(result.stderr)")
        let report = try JSONDecoder().decode(CoverageReport.self, from: Data(result.stdout.utf8))
        for channel in ["news", "sport"] {
            let channelDay = try #require(report.channels.first { $0.channel == channel }, "\(channel) is not in the report")
            let minutes = Set(kept.filter { $0.channel == channel }.map { Int(($0.sentAt / 60).rounded(.down)) })
            #expect(channelDay.creditedMinutes == minutes.count && channelDay.meters.map(\.meter) == ["a", "b"], "\(channel): \(channelDay)")
        }
    }
}
