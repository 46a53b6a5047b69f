import Foundation
import Logging
import Testing
import SampleGenerator
@testable import ID3Meter
@testable import ID3MeterCore

/// What fails is thrown, what is noticed is an event: a reading throws the failure that ended
/// it (`InputFailure`, typed) and hands out those it went on after as `.failure` events; a
/// metering session plays out what it read before the failure, ends, then throws it.
@Suite("The failure that ends a reading", .serialized, .timeLimit(.minutes(1)))
struct ReadingEndTests {
    static let origin = TagOrigin(source: "in")
    static let ending = InputFailure(source: "in", .cannotOpen(FetchError.connection("refused")))
    static let lostSegment = InputFailure(source: "in", segment: "s1.ts", .segmentSkipped(mediaSequence: 1, FetchError.http(status: 404, reason: "Not Found")))
    static let summary = InputFailure(source: "in", .heldBack(count: 3, last: "x"))

    /// Events through `ReadingEnd`: those handed out, and the failure thrown at the end.
    static func read(_ events: [MediaEvent]) -> (out: [String], thrown: InputFailure?) {
        var end = ReadingEnd()
        let out = events.flatMap { end.pass($0) }.map(String.init(describing:))
        return (out, end.failure)
    }

    @Test func onlyAFailureOfAKindThatEndsReadingsAndIsLastIsThrown() {
        let alone = Self.read([.failure(Self.ending)])
        #expect(alone.out.isEmpty && alone.thrown?.code == .cannotOpen)
        // A failure the reading went on after: an event, in its place.
        let wentOn = Self.read([.failure(Self.ending), .opened(SourceInfo(variantFrameRate: nil, videoFrameRate: nil, isLive: false)), .mediaTime(1, origin: Self.origin)])
        #expect(wentOn.thrown == nil && wentOn.out.first == "\(MediaEvent.failure(Self.ending))" && wentOn.out.count == 3)
        // A lost segment, even last, is never the end: the reading went on to its end.
        let lost = Self.read([.failure(Self.lostSegment)])
        #expect(lost.thrown == nil && lost.out.count == 1)
        // What a reading says as it closes passes while the failure waits.
        let closing = Self.read([.failure(Self.ending), .warning(Self.summary), .mediaTime(2, origin: Self.origin)])
        #expect(closing.thrown?.code == .cannotOpen && closing.out.count == 2)
    }

    @Test func anInputThatCannotBeOpenedIsThrownNotHandedOut() async throws {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString).ts").path
        var events: [MediaEvent] = []
        var thrown: InputFailure?
        do throws(InputFailure) {
            for try await event in TagSource(input: input) { events.append(event) }
        } catch {
            thrown = error
        }
        #expect(thrown?.code == .cannotOpen && thrown?.source == input, "\(String(describing: thrown))")
        #expect(events.failures.isEmpty, "\(events)")
        // The same from a scan's sequence.
        var scanned: InputFailure?
        do throws(InputFailure) {
            for try await _ in TagScanner().events(input) {}
        } catch {
            scanned = error
        }
        #expect(scanned?.code == .cannotOpen)
    }

    /// The spec sample's VOD playlist on a server where `missing` answer 404.
    static func server(missing: Set<String>, extra: [String] = []) throws -> LocalHTTPServer {
        let folder = URL(fileURLWithPath: Samples.path("spec/hls"))
        let playlist = try String(contentsOf: folder.appendingPathComponent("index.m3u8"), encoding: .utf8)
            .replacingOccurrences(of: "#EXT-X-ENDLIST", with: extra.map { "#EXTINF:10.000,\n\($0)\n" }.joined() + "#EXT-X-ENDLIST")
        return try LocalHTTPServer { request in
            if request.path == "index.m3u8" { return LocalHTTPServer.Response(body: Array(playlist.utf8)) }
            if missing.contains(request.path) { return .notFound }
            return .file(request.path, in: folder)
        }
    }

    @Test func aLostSegmentIsAnEventAndTheReadingGoesOnToItsEnd() async throws {
        let server = try Self.server(missing: ["part1.ts"])
        defer { server.stop() }
        var events: [MediaEvent] = []
        do throws(InputFailure) {
            for try await event in TagSource(input: server.url("index.m3u8"), scanner: TagScanner(fetcher: Fetcher(retry: .none))) {
                events.append(event)
            }
        } catch {
            Issue.record("thrown: \(error)")
        }
        #expect(events.failures.map(\.code) == [.segmentSkipped], "\(events.failures)")
        let expected = try Samples.expected("spec/hls/expected.jsonl").filter { $0.segment != "part1.ts" }
        #expect(events.frames(segmentNames: true) == expected.map(FoundFrame.init))
    }

    /// A VOD playlist whose segments after the first all fail: given up at the limit. The session
    /// delivers the first segment's Nielsen tags, ends the engine's session, then throws.
    @Test func aSessionPlaysOutWhatItReadEndsThenThrows() async throws {
        let server = try Self.server(missing: ["part1.ts", "part2.ts", "gone3.ts"], extra: ["gone3.ts", "gone4.ts"])
        defer { server.stop() }
        var limits = Fetcher.Limits()
        limits.maximumConsecutiveLostSegments = 2
        let source = TagSource(input: server.url("index.m3u8"), scanner: TagScanner(fetcher: Fetcher(retry: .none, limits: limits)))
        let engine = CallLog()
        var events: [MeteringEvent] = []
        var thrown: InputFailure?
        do throws(InputFailure) {
            for try await event in MeteringSession(channelName: "c").events(source, feeder: Feeder(clock: InstantClock()), engine: engine) {
                events.append(event)
            }
        } catch {
            thrown = error
        }
        guard case .gaveUp(_, let lost, let untried)? = thrown?.kind else { Issue.record("thrown: \(String(describing: thrown))"); return }
        #expect(lost == 2 && untried == 2)
        let planted = try Samples.expected("spec/hls/expected.jsonl").filter { $0.nielsen && $0.segment == "part0.ts" }.compactMap(\.owner)
        let calls = await engine.calls
        #expect(calls == ["play c", "loadMetadata"] + planted.map { "sendID3 \($0)" } + ["end"], "\(calls)")
        // The lost segment before the limit was an event.
        let lostCodes: [InputFailure.Code] = events.compactMap { if case .read(.failure(let failure)) = $0 { failure.code } else { nil } }
        #expect(lostCodes == [.segmentSkipped, .segmentSkipped])
        // A service of it throws the same, once its session ended.
        let service = MeteringService(StreamMeter(input: server.url("index.m3u8"), session: MeteringSession(channelName: "c"),
                                                  scanner: TagScanner(fetcher: Fetcher(retry: .none, limits: limits)), pace: .noWaiting),
                                      engine: engine, logger: Logger(label: "test"))
        do throws(InputFailure) {
            try await service.run()
            Issue.record("the service returned")
        } catch {
            #expect(error.code == .gaveUp)
        }
        #expect(await engine.calls.last == "end")
    }
}
