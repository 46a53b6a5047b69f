import Foundation
import Logging
import Synchronization
import Testing
@testable import ID3Meter
import ID3MeterServe
import SampleGenerator

/// Records as the line-up writes them, kept for the test to read.
final class CollectedRecords: MeterOutput, @unchecked Sendable {
    private let records = Mutex<[MeterRecord]>([])
    func write(_ record: MeterRecord) { records.withLock { $0.append(record) } }
    func finish() async {}
    var all: [MeterRecord] { records.withLock { $0 } }
}

/// `serve`'s line-up against a real local server of several live channels.
@Suite("serve: a line-up in one process", .serialized, .timeLimit(.minutes(3)))
struct ServeTests {
    static func channel(seed: UInt64, untagged: Range<Int> = 0..<0) -> LiveChannel {
        LiveChannel(preroll: 3) { date in
            var stream = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 6, segmentCount: 14, startDate: date)
            stream.seed = seed
            stream.untagged = untagged
            return stream
        }
    }

    /// Waits, without sleeping blind, until `done` holds or `seconds` pass.
    static func wait(seconds: Double, until done: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !done() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    @Test func eachChannelDeliversItsOwnTagsOnceAndTagLossAlerts() async throws {
        let server = try LineupServer(["a": Self.channel(seed: 1), "b": Self.channel(seed: 2),
                                       "gap": Self.channel(seed: 3, untagged: 6..<10)])
        defer { server.stop() }
        let config = try LineupConfig.parse("""
            defaults:
              alert_after: 2
            channels:
              - {name: a, url: "\(server.url("a"))"}
              - {name: b, url: "\(server.url("b"))"}
              - {name: gap, url: "\(server.url("gap"))"}
              - {name: dead, url: "\(server.url("dead"))"}
            """, file: "lineup.yaml")
        let collected = CollectedRecords()
        let lineup = Lineup(fetcher: Fetcher(ioTimeout: 5, retry: Samples.quickRetry), output: LineupOutput([collected]),
                            logger: Logger(label: "serve-test"))
        await lineup.apply(config.channels)
        let ended = await Self.wait(seconds: 60) {
            lineup.statuses.filter { $0.state == .ended }.map(\.name) == ["a", "b", "gap"]
        }
        let statuses = lineup.statuses
        await lineup.removeAll()
        #expect(ended, "\(statuses)")

        let records = collected.all
        func deliveries(_ channel: String) -> [MeterRecord] { records.filter { $0.channel == channel && $0.type == .sendID3 } }
        func alerts(_ channel: String) -> [MeterRecord] { records.filter { $0.channel == channel && $0.type == .alert } }
        // Each channel gets exactly its own stream's tags from where it joined, once, in order.
        for name in ["a", "b", "gap"] {
            let live = try #require(server.channels[name])
            let join = try #require(live.joinSegment(back: 3))
            #expect(deliveries(name).compactMap(\.payload) == live.owners(from: join), "\(name)")
        }
        #expect(Set(deliveries("a").compactMap(\.payload)).isDisjoint(with: deliveries("b").compactMap(\.payload)))

        // No alert while tags flowed.
        let lastOfA = try #require(deliveries("a").last?.sentAt)
        #expect(alerts("a").filter { $0.sentAt <= lastOfA }.isEmpty, "\(alerts("a"))")

        // The channel whose tags stopped for 4 s alerted 2 s after the last one (within a second)
        // and stopped alerting with the first tag back.
        let gapAlerts = alerts("gap")
        let start = try #require(gapAlerts.first { $0.active == true })
        #expect(start.alert == "no_tags")
        let before = try #require(deliveries("gap").last { $0.sentAt < start.sentAt })
        #expect(start.sentAt - before.sentAt >= 2 && start.sentAt - before.sentAt <= 3, "\(start.sentAt - before.sentAt) s")
        let end = try #require(gapAlerts.first { $0.active == false })
        let back = try #require(deliveries("gap").first { $0.sentAt > start.sentAt })
        #expect(end.alert == "no_tags" && abs(end.sentAt - back.sentAt) < 0.1)

        // The channel that never answered alerted from the start, and is being tried again.
        #expect(deliveries("dead").isEmpty)
        #expect(alerts("dead").first.map { $0.alert == "no_tags" && $0.active == true } == true)
        let dead = try #require(statuses.first { $0.name == "dead" })
        #expect(dead.state == .failed && dead.restarts >= 1 && dead.alerts == [.noTags], "\(dead)")
    }
}

/// `id3-meter serve CONFIG` as an operator runs it.
@Suite("id3-meter serve", .serialized, .timeLimit(.minutes(3)))
struct ServeCommandTests {
    /// Reads JSON lines from `pipe` until one satisfies `done`; every line read is kept.
    static func read(_ pipe: Pipe, into lines: inout [[String: Any]], until done: ([String: Any]) -> Bool) {
        var pending = Data()
        while true {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { return }
            pending += chunk
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = pending[pending.startIndex..<newline]
                pending = Data(pending[(newline + 1)...])
                guard let record = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else { continue }
                lines.append(record)
                if done(record) { return }
            }
        }
    }

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

    /// SIGHUP adds the channel the file gained and leaves the other running; SIGTERM ends both
    /// sessions (end() called on each) and exits 0.
    @Test func sighupAddsAChannelAndSigtermEndsEveryOne() throws {
        let server = try LineupServer(["a": ServeTests.channel(seed: 1), "b": ServeTests.channel(seed: 2)])
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("lineup.yaml").path
        let one = "channels:\n  - {name: a, url: \"\(server.url("a"))\"}\n"
        try Data(one.utf8).write(to: URL(fileURLWithPath: path))
        let (process, out, _) = try Command.launch(["serve", path])
        defer { if process.isRunning { process.terminate() } }
        var lines: [[String: Any]] = []
        Self.read(out, into: &lines) { $0["type"] as? String == "send_id3" }
        #expect(lines.last?["channel"] as? String == "a")

        try Data((one + "  - {name: b, url: \"\(server.url("b"))\"}\n").utf8).write(to: URL(fileURLWithPath: path))
        kill(process.processIdentifier, SIGHUP)
        Self.read(out, into: &lines) { $0["type"] as? String == "send_id3" && $0["channel"] as? String == "b" }
        #expect(lines.last?["channel"] as? String == "b", "SIGHUP started channel b")

        kill(process.processIdentifier, SIGTERM)
        Self.read(out, into: &lines) { _ in false }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let starts = lines.filter { $0["event"] as? Int == 2001 }.compactMap { $0["channel"] as? String }
        let ends = lines.filter { $0["event"] as? Int == 2002 }.compactMap { $0["channel"] as? String }
        #expect(starts.sorted() == ["a", "b"], "channel a was not started again by SIGHUP")
        #expect(ends.sorted() == ["a", "b"])
    }
}
