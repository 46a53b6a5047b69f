import Foundation
import Synchronization
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// A collector keeping docs/COLLECTOR.md's rule for redundant meters: a batch once by its id, and
/// of the `send_id3` records one per `(channel, tag_id)`, the first to come. It also keeps every
/// delivery of every batch, for a test to compare what each meter sent.
final class PairCollector: Sendable {
    struct Seen {
        var batches: Set<String> = []
        /// The kept delivery of each `channel tag_id`, and the keys in the order they came.
        var kept: [String: MeterRecord.Decoded] = [:]
        var order: [String] = []
        /// Every delivery of every batch taken, before the pair rule.
        var deliveries: [MeterRecord.Decoded] = []
    }

    final class SeenBox: Sendable {
        let lock = Mutex(Seen())
    }

    private let box = SeenBox()
    let server: LocalHTTPServer

    init() throws {
        server = try LocalHTTPServer { [box] request in
            guard request.method == "POST", let batch = try? JSONDecoder().decode(MeterRecord.Batch.self, from: Data(request.body)),
                  request.headers["idempotency-key"] == batch.batch else {
                return LocalHTTPServer.Response(status: 400)
            }
            box.lock.withLock { seen in
                guard seen.batches.insert(batch.batch).inserted else { return }
                for record in batch.records where record.type == "send_id3" {
                    seen.deliveries.append(record)
                    let key = "\(record.channel ?? "") \(record.tagID ?? "")"
                    if seen.kept[key] == nil {
                        seen.kept[key] = record
                        seen.order.append(key)
                    }
                }
            }
            return LocalHTTPServer.Response(status: 204)
        }
    }

    var url: String { server.url("collect") }

    /// The deliveries kept, of one channel, in the order they came.
    func kept(channel: String) -> [MeterRecord.Decoded] {
        box.lock.withLock { seen in seen.order.compactMap { seen.kept[$0] }.filter { $0.channel == channel } }
    }

    /// Every delivery taken, of one meter and channel.
    func deliveries(meter: String, channel: String) -> [MeterRecord.Decoded] {
        box.lock.withLock { $0.deliveries.filter { $0.meter == meter && $0.channel == channel } }
    }

    var allDeliveries: [MeterRecord.Decoded] { box.lock.withLock { $0.deliveries } }
}

/// Two `serve` processes metering one line-up, each through its own CDN, both posting to one
/// collector: one killed with SIGKILL and restarted after the playlist window has moved past
/// it, the other stopped with SIGSTOP as long and continued. Each loses tags; the pair loses none.
@Suite("Redundant meters", .serialized, .timeLimit(.minutes(3)))
struct RedundantMeterTests {
    static let channels = ["news", "sport"]
    static let window = 4

    struct Meter {
        var name: String
        var arguments: [String]
        var process: Process
    }

    /// The media sequence of the first and the last segment the stream lists now.
    static func window(of stream: LiveStream) -> (first: Int, last: Int) {
        let playlist = stream.playlist(at: Date())
        let first = playlist.firstMatch(of: /MEDIA-SEQUENCE:(\d+)/).flatMap { Int($0.output.1) } ?? 0
        return (first, first + playlist.matches(of: /#EXTINF/).count - 1)
    }

    /// Waits until every segment the stream lists now, and the next, have left its window: a
    /// meter away from now until then (it had read up to the edge) cannot read what came next.
    /// Every channel's: each started its clock at its first request, so one channel's window may
    /// trail another's by a few segments (more on a loaded machine).
    static func waitUntilTheWindowsHaveMovedOn(_ streams: [LiveStream]) throws {
        let edges = streams.map { window(of: $0).last }
        try KillAndResumeTests.wait { zip(streams, edges).allSatisfy { window(of: $0).first > $1 + 1 } }
    }

    @Test func aPairOfMetersKeepsEveryTagOnceThroughAKillAndAStop() throws {
        func channel(_ seed: UInt64) -> LiveChannel {
            LiveChannel(preroll: 3) { date in
                var stream = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: Self.window, startDate: date)
                stream.seed = seed
                return stream
            }
        }
        let lineup = Dictionary(uniqueKeysWithValues: Self.channels.enumerated().map { ($1, channel(UInt64($0 + 1))) })
        // Two CDNs of the same streams: meter a reads the first, meter b the second.
        let cdns = try ["127.0.0.1", "127.0.0.2"].map { try LineupServer(lineup, host: $0) }
        defer { cdns.forEach { $0.stop() } }
        let collector = try PairCollector()
        defer { collector.server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }

        func start(_ name: String, cdn: LineupServer) throws -> Meter {
            let own = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
            let config = try cdn.writeConfig(in: own)
            let arguments = ["serve", config.path, "--listen", "127.0.0.1:0", "--meter", name, "--collector", collector.url,
                             "--spool", own.appendingPathComponent("spool").path, "--state", own.appendingPathComponent("state").path]
            return Meter(name: name, arguments: arguments, process: try Command.launch(arguments).process)
        }
        func delivered(_ meter: String) -> [String: Int] {
            Dictionary(uniqueKeysWithValues: Self.channels.map { ($0, collector.deliveries(meter: meter, channel: $0).count) })
        }
        func waitForMore(_ meter: String, than before: [String: Int], by more: Int) throws {
            try KillAndResumeTests.wait { delivered(meter).allSatisfy { $0.value >= (before[$0.key] ?? 0) + more } }
        }
        /// Until the meter has delivered a tag of every channel from the segment at the edge now
        /// or later: read after this moment, not from what it held before.
        func waitForTheEdge(_ meter: String, of stream: LiveStream) throws {
            let edge = Self.window(of: stream).last
            try KillAndResumeTests.wait {
                Self.channels.allSatisfy { collector.deliveries(meter: meter, channel: $0).contains { ($0.mediaSequence ?? -1) >= edge } }
            }
        }

        var a = try start("a", cdn: cdns[0])
        let b = try start("b", cdn: cdns[1])
        defer { [a.process, b.process].forEach { if $0.isRunning { kill($0.processIdentifier, SIGCONT); $0.terminate() } } }
        try waitForMore("a", than: [:], by: 4)
        try waitForMore("b", than: [:], by: 4)

        // a is killed, and stays away until its place has left the window.
        let stream = try #require(lineup["news"]?.liveStream)
        let streams = try Self.channels.map { try #require(lineup[$0]?.liveStream) }
        kill(a.process.processIdentifier, SIGKILL)
        a.process.waitUntilExit()
        try Self.waitUntilTheWindowsHaveMovedOn(streams)
        a.process = try Command.launch(a.arguments).process
        try waitForTheEdge("a", of: stream)

        // b is stopped as long, and continued.
        kill(b.process.processIdentifier, SIGSTOP)
        try Self.waitUntilTheWindowsHaveMovedOn(streams)
        kill(b.process.processIdentifier, SIGCONT)
        try waitForTheEdge("b", of: stream)

        for meter in [a.process, b.process] {
            meter.terminate()
            meter.waitUntilExit()
            #expect(meter.terminationStatus == 0)
        }

        for name in Self.channels {
            let live = try #require(lineup[name])
            let truth = try #require(live.liveStream)
            let join = try #require(live.joinSegment(back: 3))
            let kept = collector.kept(channel: name).sorted { ($0.pts ?? 0) < ($1.pts ?? 0) }
            let expected = KillAndResumeTests.truth(truth, from: join, count: kept.count)
            // Every tag from the first join to the last either meter delivered, exactly once.
            #expect(kept.map { "\($0.pts ?? -1) \($0.payload ?? "")" } == expected, "channel \(name)")
            #expect(kept.count >= 20, "channel \(name): \(kept.count) tags")
            // Each meter alone lost some of them (a while killed, b while stopped): the pair did not.
            for meter in ["a", "b"] {
                let own = Set(collector.deliveries(meter: meter, channel: name).compactMap(\.payload))
                let first = kept.firstIndex { own.contains($0.payload ?? "") } ?? 0
                let last = kept.lastIndex { own.contains($0.payload ?? "") } ?? 0
                let missed = kept[first...last].filter { !own.contains($0.payload ?? "") }
                #expect(!missed.isEmpty, "meter \(meter) missed none of channel \(name) while it was away: \(collector.deliveries(meter: meter, channel: name).map { "\($0.mediaSequence ?? -1)" })")
            }
        }
        // The two meters' ids agree for every tag both delivered, and differ between tags.
        let ids = Dictionary(grouping: collector.allDeliveries) { $0.payload ?? "" }.mapValues { Set($0.compactMap(\.tagID)) }
        #expect(ids.values.allSatisfy { $0.count == 1 }, "\(ids.filter { $0.value.count != 1 }.prefix(3))")
        #expect(Set(ids.values.compactMap(\.first)).count == ids.count, "two tags share an id")
        let both = ids.keys.filter { payload in
            Set(collector.allDeliveries.filter { $0.payload == payload }.compactMap(\.meter)) == ["a", "b"]
        }
        #expect(both.count >= 10, "\(both.count) tags delivered by both meters")
        #expect(ids.keys.allSatisfy { ids[$0]?.first == TagIdentity.of(payload: $0) })
        // Both CDNs were read.
        #expect(cdns.allSatisfy { $0.server.requests.contains { $0.path.hasSuffix(".ts") } })
    }
}
