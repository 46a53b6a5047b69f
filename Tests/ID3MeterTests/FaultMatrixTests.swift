import Foundation
import Synchronization
import Testing
@testable import ID3MeterCore
import ID3MeterReport
@testable import ID3MeterServe
import SampleGenerator

/// Issue 55: a line-up of live channels, each given one fault for 36 s of its minute, metered
/// by `serve`'s line-up and read back by the report: every fault is named by its own cause, in
/// the alerts, in the records and as the gap's first cause.
@Suite("The operator's truth: each fault named for what it is", .serialized, .timeLimit(.minutes(4)))
struct FaultMatrixTests {
    /// Seconds after a channel's first request during which its fault holds.
    static let window = 12.0..<48.0

    /// Each channel's own clock (from its first request), the playlist it served last before
    /// its fault, and the first segment its CDN refused.
    final class Script: Sendable {
        private let state = Mutex<(first: [String: Date], frozen: [String: LocalHTTPServer.Response], refused: [String: Int])>(([:], [:], [:]))

        func elapsed(_ channel: String) -> Double {
            state.withLock { -($0.first[channel, default: Date()]).timeIntervalSinceNow }
        }

        func started(_ channel: String) { state.withLock { state in if state.first[channel] == nil { state.first[channel] = Date() } } }
        func keep(_ playlist: LocalHTTPServer.Response, of channel: String) { state.withLock { $0.frozen[channel] = playlist } }
        func frozen(_ channel: String) -> LocalHTTPServer.Response? { state.withLock { $0.frozen[channel] } }
        func refused(_ segment: Int, of channel: String) { state.withLock { state in if state.refused[channel] == nil { state.refused[channel] = segment } } }
        func firstRefused(_ channel: String) -> Int? { state.withLock { $0.refused[channel] } }
    }

    static let errorPage = "<!DOCTYPE html>\n<html><body><h1>403 Forbidden</h1>Access denied by edge policy.</body></html>\n"

    /// A minute of 1 s segments, a tag a second.
    static func channel(seed: UInt64, untagged: Range<Int> = 0..<0, placeholder: Range<Int> = 0..<0) -> LiveChannel {
        ServeTests.channel(seed: seed, untagged: untagged, placeholder: placeholder, tagInterval: 1, segments: 60)
    }

    @Test func eachFaultIsNamedInTheAlertsTheRecordsAndTheReport() async throws {
        let script = Script()
        let channels = ["cdn": Self.channel(seed: 11), "origin": Self.channel(seed: 12), "frozen": Self.channel(seed: 13),
                        "untagged": Self.channel(seed: 14, untagged: 15..<51), "placeholder": Self.channel(seed: 16, placeholder: 15..<51),
                        "failover": Self.channel(seed: 17), "good": Self.channel(seed: 15), "garbage": Self.channel(seed: 18)]
        // The failover channel's copy, on another host: its master lists both.
        let backup = try LocalHTTPServer(host: "127.0.0.2") { channels["failover"]!.respond(to: $0) }
        defer { backup.stop() }
        let server = try LineupServer(channels) { name, request in
            script.started(name)
            let during = Self.window.contains(script.elapsed(name))
            switch name {
            case "failover" where request.path == "master.m3u8":
                let copy = "#EXT-X-STREAM-INF:BANDWIDTH=200000,FRAME-RATE=29.970\n"
                return LocalHTTPServer.Response(body: Array("#EXTM3U\n\(copy)live.m3u8\n\(copy)\(backup.url("live.m3u8"))\n".utf8))
            case "failover" where during:
                return LocalHTTPServer.Response(status: 503)
            case "cdn" where during && request.path.hasPrefix("seg"):
                script.refused(Int(request.path.dropFirst(3).prefix { $0.isNumber }) ?? -1, of: name)
                return LocalHTTPServer.Response(status: 404)
            case "garbage" where during && request.path.hasPrefix("seg"):
                // A CDN's error page, served with 200 where the segment was due.
                return LocalHTTPServer.Response(body: Array(Self.errorPage.utf8))
            case "origin" where during && request.path == "live.m3u8":
                return LocalHTTPServer.Response(status: 503)
            case "frozen" where request.path == "live.m3u8":
                if during, let frozen = script.frozen(name) { return frozen }
                let response = channels[name]!.respond(to: request)
                script.keep(response, of: name)
                return response
            default:
                return nil
            }
        }
        defer { server.stop() }
        let running = try await RunningLineup(channels.keys.sorted(), of: server)
        let (statuses, ended) = try await running.statuses(within: 120) { $0.allSatisfy { [.ended, .failed].contains($0.state) } }
        #expect(ended, "\(statuses)")
        // A channel meant to end (`vod`) owes nothing after its end: whatever it had open ended with it.
        for channel in channels.keys {
            var open: Set<String> = []
            for alert in running.alerts(channel) where alert.name != "failing_checks" {
                if alert.active { open.insert(alert.name) } else { open.remove(alert.name) }
            }
            #expect(open.isEmpty, "\(channel): \(open) still open after its stream ended")
        }
        await running.lineup.removeAll()

        // The alerts: each fault's own, and not another's.
        // Until the stream's end (a channel whose stream ended is not torn down at once here).
        func alerts(_ channel: String) -> Set<String> {
            let end = running.deliveries(channel).last?.sentAt ?? 0
            return Set(running.alerts(channel).filter { $0.active && $0.sentAt < end }.map(\.name)).subtracting(["failing_checks"])
        }
        #expect(alerts("cdn").contains("segments_failing") && !alerts("cdn").contains("playlist_stale"), "\(alerts("cdn"))")
        #expect(alerts("origin").contains("playlist_unreachable") && !alerts("origin").contains("segments_failing"), "\(alerts("origin"))")
        #expect(alerts("frozen").contains("playlist_stale") && !alerts("frozen").contains("playlist_unreachable"), "\(alerts("frozen"))")
        #expect(alerts("untagged") == ["no_tags"], "\(alerts("untagged"))")
        #expect(alerts("placeholder") == ["only_uncreditable_tags"], "\(alerts("placeholder"))")
        #expect(alerts("good").isEmpty, "\(alerts("good"))")
        #expect(alerts("garbage").contains("stream_unreadable") && alerts("garbage").isDisjoint(with: ["segments_failing", "playlist_stale"]),
                "\(alerts("garbage"))")
        let unparsed = running.alerts("garbage").first { $0.name == "stream_unreadable" && $0.active }?.message ?? ""
        #expect(unparsed.hasPrefix("its segments do not parse: ") && unparsed.contains(#"they begin "<!DOCTYPE html>"#), "\(unparsed)")
        #expect(alerts("failover").contains("on_backup"), "\(alerts("failover"))")
        #expect(running.records("failover").warnings.contains { $0.contains("redundant copy at") }, "the switch is a record")

        // The records of what was given up on: each segment refused, with its number and status.
        func failures(_ channel: String, _ resource: MeterRecord.FetchFailure.Resource) -> [MeterRecord.FetchFailure] {
            running.records(channel).compactMap { if case .fetchFailure(let failure) = $0.content, failure.resource == resource { failure } else { nil } }
        }
        let refused = failures("cdn", .segment)
        #expect(refused.count >= 30 && refused.allSatisfy { $0.reason == "http" && $0.status == 404 }, "\(refused.prefix(3))")
        #expect(refused.first?.mediaSequence == script.firstRefused("cdn"), "\(String(describing: refused.first))")
        #expect(refused.allSatisfy { $0.url?.hasSuffix(".ts") == true && $0.attempts == 3 })
        #expect(Set(refused.compactMap(\.mediaSequence)).count == refused.count, "each segment once")
        let reloads = failures("origin", .playlist)
        #expect(!reloads.isEmpty && reloads.allSatisfy { $0.status == 503 && $0.url?.hasSuffix("live.m3u8") == true }, "\(reloads.prefix(3))")
        let pages = failures("garbage", .segment)
        #expect(pages.count >= 30 && pages.allSatisfy { $0.reason == "unreadable" && $0.status == nil }, "\(pages.prefix(3))")
        #expect(failures("frozen", .segment).isEmpty && failures("frozen", .playlist).isEmpty && failures("good", .segment).isEmpty)
        // As JSON, each is a record of its own type that reads back the same.
        let line = try #require(running.records("cdn").first { $0.type == "segment_failed" })
        #expect(try JSONDecoder().decode(MeterRecord.self, from: Data(line.jsonLine)) == line)

        // The report from those records: each channel's gap, its first cause the fault's.
        let lines = running.collected.all.map { String(decoding: $0.jsonLine, as: UTF8.self) }.joined(separator: "\n")
        let files = RecordFiles(bytes: Data(lines.utf8), name: "lineup")
        let calendar = ReportCalendar(zone: TimeZone(identifier: "UTC")!)
        // The report's time: the good channel's last tag, before any stream's end.
        let now = try #require(running.deliveries("good").last?.sentAt)
        let days = try #require(calendar.days(ending: calendar.day(of: now), count: 2))
        let report = try await CoverageBuilder(calendar: calendar, now: now).report(days: days, from: files, source: "records")
        func gaps(_ channel: String) -> [ChannelDay.Gap] { report.channels.filter { $0.channel == channel }.flatMap(\.gaps) }
        for (channel, cause, words) in [("cdn", GapCause.segmentsFailing, "HTTP 404"), ("origin", .playlistUnreachable, "HTTP 503"),
                                        ("frozen", .playlistStale, "advanced"), ("untagged", .noTags, "without Nielsen tags"),
                                        ("placeholder", .onlyUncreditableTags, "placeholder-CID"),
                                        ("garbage", .streamUnreadable, "did not parse (unreadable ×")] {
            let found = gaps(channel).filter { $0.seconds >= 30 }
            #expect(found.count == 1, "\(channel): \(gaps(channel))")
            guard let gap = found.first else { continue }
            #expect(gap.seconds <= 45, "\(channel): \(gap.seconds) s")
            #expect(gap.causes.first?.kind == cause && gap.causes.first?.detail.contains(words) == true, "\(channel): \(gap.causes)")
        }
        #expect(gaps("good").isEmpty, "\(gaps("good"))")
        // The copy saved the failover channel's audience: no gap, or one the report puts down to the failover.
        #expect(gaps("failover").allSatisfy { $0.causes.contains { $0.kind == .failover } }, "\(gaps("failover"))")

        // The same records through `collect`, read back by `report --database`: the same causes.
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("records.db").path
        let collector = try CollectTests.RunningCollector(database: database)
        let posted = try await CollectTests.post(#"{"batch":"matrix","records":[\#(lines.split(separator: "\n").joined(separator: ","))]}"#,
                                                 to: collector.url)
        collector.stop()
        #expect(posted.status == 200, "\(posted)")
        let fromDatabase = try Command.run(["report", "--database", database, "--day", days[1], "--days", "2", "--time-zone", "UTC", "--format", "json"])
        let stored = try JSONDecoder().decode(CoverageReport.self, from: Data(fromDatabase.stdout.utf8))
        for channel in ["cdn", "origin", "frozen", "untagged", "placeholder", "garbage"] {
            let first = { (report: CoverageReport) in
                report.channels.filter { $0.channel == channel }.flatMap(\.gaps).first { $0.seconds >= 30 }?.causes.first?.kind
            }
            #expect(first(stored) != nil && first(stored) == first(report), "\(channel): \(String(describing: first(stored)))")
        }

        // The CDN's gap starts at the last tag of the segment before the first refused one.
        if let first = script.firstRefused("cdn"), let gap = gaps("cdn").first(where: { $0.seconds >= 30 }),
           let live = channels["cdn"]?.liveStream, let lastOwner = live.tags(inSegment: first - 1).last?.owner {
            let delivered = running.deliveries("cdn").first { $0.payload == lastOwner }
            #expect(delivered.map { abs($0.sentAt - gap.start) < 1 } == true, "gap from \(gap.from); the last tag before the fault at \(String(describing: delivered?.sentAt))")
        }
    }

    /// The matrix's two faults of processes, through the real `serve` and `collect`: a meter
    /// killed (`kill -9`, no `--state`) and started again 30 s later, and the collector down
    /// (killed) for a minute around it. The meter's absence is one gap, from its last tag,
    /// put down to its restart without a stop; the collector's minute is no gap at all; the
    /// database holds every record the meter wrote, once.
    @Test func aMeterKilledAndTheCollectorDownForAMinute() async throws {
        let server = try LineupServer(["news": LiveChannel(preroll: 3) { date in
            var stream = LiveStream(segmentDuration: 1, tagInterval: 1, windowSize: 6, startDate: date)
            stream.seed = 19
            return stream
        }])
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("records.db").path
        var collector = try CollectTests.RunningCollector(database: database)
        let file = folder.appendingPathComponent("records.jsonl")
        let arguments = ["serve", try server.writeConfig(in: folder).path, "--listen", "127.0.0.1:0", "--output", file.path,
                         "--collector", collector.url, "--spool", folder.appendingPathComponent("spool").path, "--meter", "m"]
        func sends() -> [[String: Any]] { KillAndResumeTests.sends(file) }
        func kept() async throws -> [String] { try await CollectTests.kept(in: database).compactMap(\.delivery?.payload) }
        func wait(_ what: String, within seconds: Double = 60, until done: () async throws -> Bool) async throws {
            let deadline = Date().addingTimeInterval(seconds)
            while try await !done() {
                guard Date() < deadline else { throw TestFailure("waited \(Int(seconds)) s for \(what)") }
                try await Task.sleep(for: .milliseconds(100))
            }
        }

        var serve = try Command.launch(arguments).process
        defer { if serve.isRunning { serve.terminate() } }
        try await wait("the first tags") { sends().count >= 8 }
        collector.stop(SIGKILL)
        let collectorDown = Date()
        let whileCollecting = sends().count
        try await wait("tags with the collector down") { sends().count >= whileCollecting + 6 }
        kill(serve.processIdentifier, SIGKILL)
        serve.waitUntilExit()
        let killed = Date()
        let lastBeforeKill = try #require(sends().last?["sent_at"] as? Double)
        let beforeRestart = sends().count
        // Longer than a gap (`CoverageMinute.gapThreshold`, 30 s).
        try await wait("30 s without a meter") { Date() >= killed.addingTimeInterval(30) }
        serve = try Command.launch(arguments).process
        try await wait("tags after the restart") { sends().count >= beforeRestart + 5 }
        try await wait("the collector's minute", within: 70) { Date() >= collectorDown.addingTimeInterval(60) }
        collector = try CollectTests.RunningCollector(database: database, port: collector.port)
        // What both runs spooled while it was down reaches it; then the meter stops, and its last batch too.
        try await wait("the spool sent") { try await kept().count >= beforeRestart + 5 }
        KillAndResumeTests.stop(serve)
        let written = sends().compactMap { $0["payload"] as? String }
        try await wait("the last batch") { try await kept().count >= written.count }
        collector.stop()
        let stored = try await kept()
        #expect(stored == written, "every delivery the meter wrote, once, in order: \(stored.count) stored, \(written.count) written")

        let day = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withFullDate])
        let said = try Command.run(["report", "--database", database, "--day", day, "--days", "2", "--time-zone", "UTC", "--format", "json"])
        let report = try JSONDecoder().decode(CoverageReport.self, from: Data(said.stdout.utf8))
        let gaps = report.channels.filter { $0.channel == "news" }.flatMap(\.gaps)
        #expect(gaps.count == 1, "the kill's gap alone, none for the collector's minute: \(gaps)")
        let gap = try #require(gaps.first)
        #expect(abs(gap.start - lastBeforeKill) < 1.5, "from the last tag before the kill: \(gap.from), \(lastBeforeKill)")
        #expect(gap.seconds >= 30 && gap.seconds <= 45, "\(gap.seconds) s")
        #expect(gap.causes.first?.kind == .meterRestart && gap.causes.first?.detail.contains("without a stop record (killed") == true, "\(gap.causes)")
    }

    /// A meter killed with an alert open, and started again, ended that alert when it started
    /// (it raises what is still true anew): a later gap is not put down to it. The end of a day
    /// is 24:00:00 of it; a report of days without records says which days the records are of.
    @Test func aRestartedMetersOldAlertEndsAtItsStartAndMidnightStaysInItsDay() async throws {
        let day = 1_795_046_400.0 // 2026-11-19T00:00:00Z
        var factory = NielsenTagFactory(seed: 5)
        func delivery(_ at: Double, channel: String = "news") -> String {
            var record = MeterRecord.delivery(factory.owner(secondsIntoDay: Int(at - day)), context: TagContext(pts: 0, origin: TagOrigin(source: "s"), programDateTime: nil),
                                              at: Date(timeIntervalSince1970: at))
            (record.channel, record.meter) = (channel, "a")
            return String(decoding: record.jsonLine, as: UTF8.self)
        }
        let lines = stride(from: day + 60, to: day + 100, by: 2).map { delivery($0) }
            + [#"{"type":"alert","alert":"no_tags","active":true,"message":"no Nielsen tag for 30 s","sent_at":\#(day + 130),"channel":"news","meter":"a"}"#,
               #"{"type":"event","event":2001,"message":"startup","sent_at":\#(day + 300),"channel":"news","meter":"a"}"#]
            + stride(from: day + 310, to: day + 400, by: 2).map { delivery($0) }
            + stride(from: day + 500, to: day + 86_399, by: 2).map { delivery($0) }
            // A meter that stopped with an alert open, and never came back.
            + stride(from: day + 60, to: day + 100, by: 2).map { delivery($0, channel: "sport") }
            + [#"{"type":"alert","alert":"no_tags","active":true,"message":"no Nielsen tag for 30 s","sent_at":\#(day + 130),"channel":"sport","meter":"a"}"#]
        let files = RecordFiles(bytes: Data(lines.joined(separator: "\n").utf8), name: "f")
        let calendar = ReportCalendar(zone: TimeZone(identifier: "UTC")!)
        let report = try await CoverageBuilder(calendar: calendar, now: day + 2 * 86_400).report(days: ["2026-11-19"], from: files, source: "f")
        let gaps = try #require(report.channels.first { $0.channel == "news" }).gaps
        #expect(gaps.map(\.seconds) == [212, 102], "\(gaps)")
        #expect(gaps.first?.causes.map(\.kind).contains(.noTags) == true, "\(gaps.first?.causes ?? [])")
        let later = try #require(gaps.first { $0.from.hasSuffix("T00:06:38+00:00") }, "\(gaps)")
        #expect(!later.causes.map(\.kind).contains(.noTags), "the alert ended when meter a started again: \(later.causes)")
        #expect(gaps.first?.causes.first { $0.kind == .noTags }?.detail == "segments came without Nielsen tags", "ended by the restart, not open")
        let sport = try #require(report.channels.first { $0.channel == "sport" }?.gaps.last)
        #expect(sport.to == "2026-11-19T24:00:00+00:00" && sport.causes.first { $0.kind == .noTags }?.detail == "segments came without Nielsen tags (still open when the records end)",
                "\(sport)")
        let day1 = try #require(report.channels.first { $0.channel == "news" })
        #expect(day1.onAirTo == "2026-11-19T24:00:00+00:00", "\(String(describing: day1.onAirTo))")

        // The day before the records begin (a database holding today alone, asked for yesterday).
        let empty = try await CoverageBuilder(calendar: calendar, now: day + 40 * 86_400).report(days: ["2026-11-18"], from: files, source: "f")
        #expect(empty.channels.isEmpty && empty.holds == CoverageReport.Holds(first: "2026-11-19", last: "2026-11-19"), "\(String(describing: empty.holds))")
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("records.jsonl")
        try Data(lines.joined(separator: "\n").utf8).write(to: file)
        let said = try Command.run(["report", file.path, "--day", "2026-11-18", "--time-zone", "UTC"])
        #expect(said.status == 0 && said.stderr.contains("no channel was on air on 2026-11-18") && said.stderr.contains("the records are of 2026-11-19 to 2026-11-19"),
                "\(said.stderr)")
    }
}
