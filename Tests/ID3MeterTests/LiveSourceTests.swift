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
        for await event in Feeder(clock: clock).events(source, engine: engine).caught({ .read(.failure($0)) }) {
            if case .read(.failure(let failure)) = event { failures.append(failure) }
        }
        // Three segments were out when it joined (0, 1, 2): two back from the edge is segment 1.
        let join = try #require(server.joinSegment(back: 2))
        let stream = try #require(server.liveStream)
        #expect(engine.sends.map(\.payload) == (join..<7).flatMap { stream.tags(inSegment: $0).map(\.owner) })
        #expect(failures.isEmpty)
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
        var events: [MediaEvent] = []
        for await event in TagSource(input: server.url("live.m3u8"), liveStart: 2, clock: ContinuousClock()).caught({ .failure($0) }) { events.append(event) }
        let failures = events.compactMap { if case .failure(let failure) = $0 { failure } else { nil } }
        #expect(failures.count == 1)
        guard case .leftLiveWindow(let lost) = failures.first?.kind else { Issue.record("\(failures)"); return }
        #expect(lost == 2...4)
        #expect(events.segments.map(\.mediaSequence) == [0, 1, 5, 6])
    }
}

/// HTTP as a CDN sees it: one kept-alive connection for the whole follow, and the headers asked for.
@Suite("HTTP connections", .serialized, .timeLimit(.minutes(3)))
struct HTTPConnectionTests {
    @Test func aLiveFollowReusesOneConnectionAndSendsTheHeaders() async throws {
        let server = try LiveServer(preroll: 3) { LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 3, segmentCount: 7, startDate: $0) }
        defer { server.stop() }
        let headers = [Fetcher.Header(name: "X-Token", value: "t0k3n"), Fetcher.Header(name: "Cookie", value: "session=42"),
                       Fetcher.Header(name: "User-Agent", value: "backend/1.0")]
        let fetcher = Fetcher(ioTimeout: .seconds(5), headers: headers)
        var segments = 0
        for await event in TagSource(input: server.url("master.m3u8"), scanner: TagScanner(fetcher: fetcher), liveStart: 2,
                                     clock: ContinuousClock()).caught({ .failure($0) }) {
            if case .segment = event { segments += 1 }
        }
        let requests = server.server.requests
        #expect(segments >= 4)
        #expect(requests.filter { $0.path == "live.m3u8" }.count >= 3, "reloads")
        #expect(requests.filter { $0.path.hasSuffix(".ts") }.count >= 4, "segments")
        #expect(server.server.connections == 1, "\(requests.count) requests over \(server.server.connections) connections")
        for request in requests {
            #expect(request.headers["x-token"] == "t0k3n" && request.headers["cookie"] == "session=42", "\(request.path)")
            #expect(request.headers["user-agent"] == "backend/1.0", "the caller's user agent replaces ours")
        }
    }

    /// Credentials stay with the origin (scheme, host, port) they were given for; other headers follow a redirect.
    @Test(arguments: ["localhost", "127.0.0.1"])
    func aRedirectToAnotherOriginKeepsHeadersButNotCredentials(host: String) async throws {
        let target = try LocalHTTPServer(serving: Samples.folder)
        defer { target.stop() }
        // Another host, or the same host on another port: another origin either way.
        let other = "http://\(host):\(target.port)/spec/hls/index.m3u8"
        let origin = try LocalHTTPServer { _ in LocalHTTPServer.Response(status: 302, headers: ["Location": other]) }
        defer { origin.stop() }
        let fetcher = Fetcher(ioTimeout: .seconds(5), headers: [Fetcher.Header(name: "X-Channel", value: "7"), Fetcher.Header(name: "Authorization", value: "Bearer x")])
        let playlist = try await fetcher.fetch(origin.url("index.m3u8"), as: .playlist)
        #expect(String(decoding: playlist, as: UTF8.self).hasPrefix("#EXTM3U"))
        #expect(origin.requests.first?.headers["authorization"] == "Bearer x")
        #expect(target.requests.first?.headers["x-channel"] == "7")
        #expect(target.requests.first?.headers["authorization"] == nil)
    }

    /// `--header` on the command line reaches every request of a scan; a malformed one is a usage error.
    @Test func theHeaderOptionGoesWithEveryRequest() async throws {
        let server = try LocalHTTPServer(serving: Samples.folder)
        defer { server.stop() }
        let url = server.url("spec/hls/index.m3u8")
        let result = try await offThePool { try Command.run(["scan", "--format", "jsonl", "--header", "X-Token: abc", "--header", "Cookie: c=1", url]) }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(server.requests.count > 1)
        #expect(server.requests.allSatisfy { $0.headers["x-token"] == "abc" && $0.headers["cookie"] == "c=1" })
        let bad = try await offThePool { try Command.run(["scan", "--header", "X-Token", url]) }
        #expect(bad.status == 2 && bad.stderr.contains("--header 'X-Token' is not 'Name: value'"), "\(bad.stderr)")
    }

    @Test func aHeaderThatIsNotNameColonValueIsRefused() {
        #expect(Fetcher.Header("X-Token: a: b") == Fetcher.Header(name: "X-Token", value: "a: b"))
        for bad in ["no colon", ": empty name", "Bad Name: x", "X-A: one\r\nX-B: two"] { #expect(Fetcher.Header(bad) == nil, "\(bad)") }
    }
}
