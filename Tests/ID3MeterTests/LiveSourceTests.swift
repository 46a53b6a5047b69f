import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// Live HLS against a real local server whose sliding-window playlist grows in real time.
@Suite("Live HLS", .serialized, .timeLimit(.minutes(3)))
struct LiveSourceTests {
    @Test func joinsAtTheLiveEdgeAndDeliversEveryLaterTagExactlyOnceInOrder() async throws {
        let server = try LiveServer(preroll: 3) { LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 3, segmentCount: 7, startDate: $0) }
        defer { server.stop() }
        let clock = InstantClock()
        let engine = ClockedEngine(clock: clock)
        var failures: [InputFailure] = []
        let source = TagSource(input: server.url("master.m3u8"), liveStart: 2, clock: ContinuousClock())
        await Feeder(clock: clock).run(source, engine: engine) { notice in
            if case .failure(let failure) = notice { failures.append(failure) }
        }
        // Three segments were out when it joined (0, 1, 2): two back from the edge is segment 1.
        let join = try #require(server.joinSegment(back: 2))
        let stream = try #require(server.liveStream)
        #expect(engine.sends.map(\.payload) == (join..<7).flatMap { stream.tags(inSegment: $0).map(\.owner) })
        #expect(failures == [])
        let requests = server.server.requests.map(\.path)
        #expect(requests.filter { $0 == "live.m3u8" }.count >= 3, "the playlist was reloaded as it grew")
        #expect(requests.filter { $0.hasSuffix(".ts") } == (join..<7).map { "seg\($0).ts" }, "each segment fetched once")
    }

    @Test func segmentsThatLeftTheWindowAreReportedAsAGap() async throws {
        // The first load shows segments 0-1; every later one shows 5-6 and the end.
        let server = try ScriptedPlaylistServer.start(stream: LiveStream(segmentDuration: 1, tagInterval: 1, windowSize: 2)) { load in
            load == 1 ? ScriptedPlaylistServer.playlist(0...1, ended: false) : ScriptedPlaylistServer.playlist(5...6, ended: true)
        }
        defer { server.stop() }
        var events: [SourceEvent] = []
        for await event in TagSource(input: server.url("live.m3u8"), liveStart: 2, clock: ContinuousClock()) { events.append(event) }
        let failures = events.compactMap { if case .failure(let failure) = $0 { failure } else { nil } }
        #expect(failures.map(\.reason) == ["segments 2...4 left the live window before they could be fetched"])
        let sequences = events.compactMap { if case .chunk(let chunk) = $0 { chunk.origin.segment?.mediaSequence } else { nil } }
        #expect(sequences == [0, 1, 5, 6])
    }
}
