import Foundation
import Synchronization
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// Faults a real local server injects: error statuses, stalls, refused connections, restarts.
@Suite("Network faults", .timeLimit(.minutes(3)))
struct NetworkFaultTests {
    static func expected(_ name: String) throws -> [FoundFrame] {
        try Samples.expected(name).map(FoundFrame.init)
    }

    @Test func aSegmentThatFailsTwiceIsFetchedOnTheThirdTry() async throws {
        let failures = Mutex(2)
        let server = try LocalHTTPServer { request in
            if request.path == "spec/hls/part1.ts", failures.withLock({ $0 -= 1; return $0 >= 0 }) {
                return LocalHTTPServer.Response(status: 503)
            }
            return .file(request.path, in: Samples.folder)
        }
        defer { server.stop() }
        let events = await Samples.scan(server.url("spec/hls/index.m3u8"))
        #expect(events.failures.isEmpty)
        #expect(events.frames(segmentNames: true) == (try Self.expected("spec/hls/expected.jsonl")))
        #expect(server.requests.filter { $0.path == "spec/hls/part1.ts" }.count == 3)
    }

    @Test func aSegmentThatNeverComesIsReportedAfterEveryTry() async throws {
        let server = try LocalHTTPServer { request in
            request.path == "spec/hls/part1.ts" ? .notFound : .file(request.path, in: Samples.folder)
        }
        defer { server.stop() }
        let events = await Samples.scan(server.url("spec/hls/index.m3u8"))
        #expect(events.failures.count == 1)
        let fetch = try #require(events.failures.first?.fetchFailure)
        guard case .http(404, _) = fetch.error else { Issue.record("\(fetch)"); return }
        #expect(fetch.attempts == 3)
        #expect(server.requests.filter { $0.path == "spec/hls/part1.ts" }.count == 3)
    }

    @Test func aStalledResponseTimesOutAndIsTriedAgain() async throws {
        let stalls = Mutex(1)
        let server = try LocalHTTPServer { request in
            if request.path == "spec/hls/part1.ts", stalls.withLock({ $0 -= 1; return $0 >= 0 }) {
                Thread.sleep(forTimeInterval: 3)
            }
            return .file(request.path, in: Samples.folder)
        }
        defer { server.stop() }
        let started = Date()
        let events = await Samples.scan(server.url("spec/hls/index.m3u8"), fetcher: Fetcher(ioTimeout: .seconds(0.5), retry: Samples.quickRetry))
        #expect(Date().timeIntervalSince(started) < 2.5, "the stall was cut off by the timeout, not waited out")
        #expect(events.failures.isEmpty)
        #expect(events.frames(segmentNames: true) == (try Self.expected("spec/hls/expected.jsonl")))
    }

    @Test func aRefusedConnectionFailsFastWithItsReason() async throws {
        let server = try LocalHTTPServer { _ in .notFound }
        let url = server.url("live.m3u8")
        server.stop()
        let started = Date()
        let events = await Samples.scan(url)
        #expect(Date().timeIntervalSince(started) < 2)
        guard case .connection(let why)? = events.failures.first?.fetchFailure?.error else { Issue.record("\(events.failures)"); return }
        #expect(why == "Connection refused", "the system's words, not NIO's wrapping of them: \(why)")
    }

    /// The server goes away for two seconds mid-stream and comes back on the same port; its
    /// window outlasts the outage, so every tag after the join still arrives exactly once.
    @Test func aLiveServerRestartLosesAndDoublesNothing() async throws {
        let first = try LiveServer(preroll: 2) { LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 6, segmentCount: 8, startDate: $0) }
        let restarted = Mutex<LiveServer?>(nil)
        Task.detached {
            while first.joinedOn == nil { try? await Task.sleep(for: .milliseconds(20)) }
            try? await Task.sleep(for: .seconds(1))
            first.stop()
            try? await Task.sleep(for: .seconds(2))
            restarted.withLock { $0 = try? LiveServer(restarting: first) }
        }
        var events: [MediaEvent] = []
        // The default retries (4 tries over 3.5 s) outlast the 2 s outage, as they are meant to: a
        // segment fetched while the server is down is not lost, whenever the outage falls.
        let source = TagSource(input: first.url("master.m3u8"), scanner: TagScanner(fetcher: Fetcher()),
                               liveStart: 1, clock: ContinuousClock())
        for await event in source.caught({ .failure($0) }) { events.append(event) }
        defer { restarted.withLock { $0?.stop() } }
        let join = try #require(first.joinSegment(back: 1))
        let stream = try #require(first.liveStream)
        #expect(events.segments.map(\.mediaSequence) == Array(join..<8))
        #expect(events.tags.flatMap(\.nielsenTags).map(\.payload) == (join..<8).flatMap { stream.tags(inSegment: $0).map(\.owner) })
        // Read through the restart. Whether a reload fell in the outage and was reported depends
        // on where the outage fell between reloads (on a loaded machine, none may): what was
        // reported is a reload's failure, never a segment's.
        #expect(restarted.withLock { $0?.server.requests.isEmpty == false }, "the restarted server was read")
        let failures = events.compactMap { if case .failure(let failure) = $0 { failure } else { nil } }
        #expect(failures.allSatisfy { if case .reloadFailed = $0.kind { true } else { false } }, "\(failures)")
    }

    @Test func aTLSFailureIsReportedWithItsReason() async throws {
        let server = try LocalHTTPServer(serving: Samples.folder)
        defer { server.stop() }
        let url = server.url("spec/standard-60.ts").replacingOccurrences(of: "http://", with: "https://")
        let started = Date()
        let events = await Samples.scan(url, fetcher: Fetcher(ioTimeout: .seconds(2), retry: .none))
        #expect(Date().timeIntervalSince(started) < 5)
        let failure = try #require(events.failures.first)
        guard case .cannotOpen = failure.kind, case .connection? = failure.fetchFailure?.error else { Issue.record("\(failure)"); return }
        #expect(events.tags.isEmpty)
    }

    /// libavformat 5.1 follows 8 redirects and then fails with a bare EIO: the error says what happened.
    @Test func aRedirectLoopSaysSoInWords() async throws {
        let server = try LocalHTTPServer { request in
            LocalHTTPServer.Response(status: 302, headers: ["Location": "/\(request.path)"])
        }
        defer { server.stop() }
        let events = await Samples.scan(server.url("loop.ts"), fetcher: Fetcher(ioTimeout: .seconds(2), retry: .none))
        guard case .redirect(let why)? = events.failures.first?.fetchFailure?.error else { Issue.record("\(events.failures)"); return }
        #expect(why.contains("redirected more than 8 times"), "\(why)")
        #expect(server.requests.count > 8)
    }

    /// A reload that returns garbage (a truncated or broken playlist) is retried; the stream goes on.
    /// The lost-segment rule of a live playlist: at `--max-lost-segments` in a row it says so,
    /// once, and goes on following (a scan of a playlist that cannot change gives up instead).
    @Test func aLiveStreamWhoseSegmentsFailIsStillFollowedAndSaysSoOnce() async throws {
        let server = try LocalHTTPServer { request in
            guard request.path == "live.m3u8" else { return .notFound }
            let lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:1", "#EXT-X-MEDIA-SEQUENCE:0"] + (0..<5).flatMap { ["#EXTINF:1,", "s\($0).ts"] }
            return LocalHTTPServer.Response(body: Array(lines.joined(separator: "\n").utf8))
        }
        defer { server.stop() }
        var limits = Fetcher.Limits()
        limits.maximumConsecutiveLostSegments = 3
        var failures: [InputFailure.Kind] = []
        for await event in TagSource(input: server.url("live.m3u8"), scanner: TagScanner(fetcher: Fetcher(retry: .none, limits: limits)),
                                     liveStart: 5, clock: ContinuousClock()).caught({ .failure($0) }) {
            if case .failure(let failure) = event { failures.append(failure.kind) }
            if failures.count == 6 { break }  // the five segments, and the one line at three
        }
        #expect(failures.count == 6, "\(failures)")
        #expect(failures.filter { if case .segmentSkipped = $0 { true } else { false } }.count == 5, "\(failures)")
        guard case .lostInARow(3)? = failures.dropFirst(3).first else { Issue.record("\(failures)"); return }
        #expect(server.requests.map(\.path) == ["live.m3u8"] + (0..<5).map { "s\($0).ts" })
    }

    @Test func anInvalidPlaylistReloadIsRetried() async throws {
        // Segments 0-1, then garbage, then 0-3 and the end.
        let server = try ScriptedPlaylistServer.start(stream: LiveStream(segmentDuration: 1, tagInterval: 1, windowSize: 6)) { load in
            switch load {
            case 1: ScriptedPlaylistServer.playlist(0...1, ended: false)
            case 2: "<html><body>upstream error</bo"
            default: ScriptedPlaylistServer.playlist(0...3, ended: true)
            }
        }
        defer { server.stop() }
        var events: [MediaEvent] = []
        for await event in TagSource(input: server.url("live.m3u8"), scanner: TagScanner(fetcher: Fetcher(retry: Samples.quickRetry)),
                                     liveStart: 5, clock: ContinuousClock()).caught({ .failure($0) }) { events.append(event) }
        #expect(events.segments.map(\.mediaSequence) == Array(0..<4))
        let failures = events.compactMap { if case .failure(let failure) = $0 { failure.kind } else { nil } }
        #expect(failures.count == 1, "\(failures)")
        guard case .reloadFailed(SegmentLoadError.unreadablePlaylist(_, let error))? = failures.first else { Issue.record("\(failures)"); return }
        #expect(error == PlaylistError(.notHLS, line: 1))
    }
}
