import Foundation
import Synchronization
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import ID3MeterServe
import SampleGenerator

/// Low-latency HLS playlists: full segments are read (their tags are all there), the playlist
/// is reloaded by blocking requests (`_HLS_msn`) and delta updates (`_HLS_skip=YES`) where the
/// server offers them, rather than polled whole.
@Suite("Low-latency HLS", .serialized, .timeLimit(.minutes(3)))
struct LowLatencyTests {
    @Test func serverControlAndDeltaUpdatesAreRead() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:9
            #EXT-X-TARGETDURATION:4
            #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=24.0,PART-HOLD-BACK=3.0
            #EXT-X-PART-INF:PART-TARGET=1.0
            #EXT-X-MEDIA-SEQUENCE:100
            #EXT-X-SKIP:SKIPPED-SEGMENTS=7
            #EXTINF:4,
            s107.ts
            #EXT-X-PART:DURATION=1.0,URI="s108.0.ts",INDEPENDENT=YES
            #EXTINF:4,
            s108.ts
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="s109.0.ts"
            """
        guard case .media(let media) = try PlaylistParser.parse(text, location: "http://h/p.m3u8") else {
            Issue.record("expected a media playlist"); return
        }
        #expect(media.canBlockReload && media.canSkipUntil == 24)
        #expect(media.segments.map(\.mediaSequence) == [107, 108] && media.segments.map(\.uri) == ["http://h/s107.ts", "http://h/s108.ts"])
        #expect(media.skippedSegments == 7 && media.lastSequence == 108)
        #expect(throws: PlaylistError.self) { try PlaylistParser.parse("#EXTM3U\n#EXTINF:4,\na.ts\n#EXT-X-SKIP:SKIPPED-SEGMENTS=2\n", location: "p") }
        #expect(PlaylistFollower<ContinuousClock>.Iterator.deliveryDirectives("http://h/p.m3u8?t=1", segment: 109, skip: true)
            == "http://h/p.m3u8?t=1&_HLS_msn=109&_HLS_skip=YES")
    }

    struct Run {
        var playlistRequests: [LocalHTTPServer.Request]
        var playlistBytes: Int
        var delivered: [String]
        var expected: [String]
        var segments: Int
        var allPaths: [String]
        /// Seconds from each segment's publication to its request, in the mean.
        var meanDelay: Double
    }

    /// `serve` meters the last 16 s of a 76-segment channel (1 s segments, a tag every 0.5 s, a
    /// window of 60);
    /// `holds: false` answers at once whatever is asked, as a server that claims blocking
    /// reloads and does not hold them.
    static func meter(lowLatency: Bool, holds: Bool = true) async throws -> Run {
        // On air for a minute before the meter joins, with a minute's window, as a DVR-able channel
        // is; joined half a segment after one was published, the mean phase of a poller's reloads.
        let channel = LiveChannel(preroll: 60.5) { date in
            var stream = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 60, segmentCount: 76, startDate: date)
            stream.seed = 21
            stream.lowLatency = lowLatency
            stream.skipUntil = 4
            return stream
        }
        let bytes = Atomic(0)
        let server = try LineupServer(["ll": channel]) { _, request in
            guard request.path == "live.m3u8" else { return nil }
            var response = channel.respond(to: holds ? request : LocalHTTPServer.Request(method: request.method, path: request.path))
            if !holds, let stream = channel.liveStream { response.body = Array(stream.playlist(at: Date()).utf8) }
            bytes.add(response.body.count, ordering: .relaxed)
            return response
        }
        defer { server.stop() }
        let running = try await RunningLineup(["ll"], of: server)
        let (statuses, ended) = try await running.statuses { $0.first?.state == .ended }
        await running.lineup.removeAll()
        #expect(ended, "\(statuses)")
        let join = try #require(channel.joinSegment(back: 3))
        let requests = server.server.requests
        let start = try #require(channel.liveStream?.startDate)
        // Of the segments published after the meter joined (those it joined on were there already).
        let joined = try #require(requests.first { $0.path == "ll/live.m3u8" }?.receivedAt)
        let delays = requests.compactMap { request -> Double? in
            guard request.path.hasPrefix("ll/seg"), let index = Int(request.path.dropFirst(6).dropLast(3)) else { return nil }
            let published = start.addingTimeInterval(Double(index + 1))
            return published > joined ? request.receivedAt.timeIntervalSince(published) : nil
        }
        return Run(playlistRequests: requests.filter { $0.path == "ll/live.m3u8" }, playlistBytes: bytes.load(ordering: .relaxed),
                   delivered: running.deliveries("ll").compactMap(\.payload), expected: channel.owners(from: join),
                   segments: 76 - join, allPaths: requests.map(\.path), meanDelay: delays.reduce(0, +) / Double(max(delays.count, 1)))
    }

    @Test func blockingReloadsAndDeltaUpdatesCutRequestsAndBytes() async throws {
        let polled = try await Self.meter(lowLatency: false)
        let blocking = try await Self.meter(lowLatency: true)
        for run in [polled, blocking] {
            #expect(!run.delivered.isEmpty && run.delivered == run.expected)
        }
        // One reload a segment, each asking for the next one, most of them as a delta.
        let reloads = blocking.playlistRequests.dropFirst()
        #expect(reloads.allSatisfy { $0.query["_HLS_msn"] != nil }, "\(reloads.map(\.query))")
        #expect(reloads.count <= blocking.segments + 2, "\(reloads.count) reloads for \(blocking.segments) segments")
        #expect(reloads.filter { $0.query["_HLS_skip"] == "YES" }.count >= reloads.count / 2)
        #expect(!blocking.allPaths.contains { $0.contains(".part") }, "a partial segment was fetched")
        // Per segment read, against polling the same stream's whole playlist (same-run baseline).
        func perSegment(_ run: Run) -> (requests: Double, bytes: Double) {
            (Double(run.playlistRequests.count) / Double(run.segments), Double(run.playlistBytes) / Double(run.segments))
        }
        let (pollRequests, pollBytes) = perSegment(polled), (blockRequests, blockBytes) = perSegment(blocking)
        print(String(format: "LL-HLS per segment: polled %.2f requests %.0f bytes, fetched %.3f s after publication; "
                     + "blocking %.2f requests %.0f bytes, %.3f s (%.2fx, %.2fx, %.2fx)", pollRequests, pollBytes, polled.meanDelay,
                     blockRequests, blockBytes, blocking.meanDelay, blockRequests / pollRequests, blockBytes / pollBytes,
                     blocking.meanDelay / polled.meanDelay))
        // Requests: a poll a target duration after one that brought a segment finds the next on
        // time on this regular stream, so blocking saves none here (it does when segments come
        // late, and each comes as soon as it is there); bytes: a delta of 4 s, not a minute.
        #expect(blockRequests <= pollRequests + 0.15)
        #expect(blockBytes < pollBytes / 3)
        // Each segment asked for as soon as it is there.
        #expect(blocking.meanDelay < 0.1 && blocking.meanDelay < polled.meanDelay, "\(blocking.meanDelay) s, \(polled.meanDelay) s")
    }

    /// A server that says it can block reloads but answers at once is not asked without a pause.
    @Test func aServerThatDoesNotHoldIsNotAskedAgainAndAgain() async throws {
        let run = try await Self.meter(lowLatency: true, holds: false)
        #expect(!run.delivered.isEmpty && run.delivered == run.expected)
        #expect(run.playlistRequests.count <= 3 * run.segments, "\(run.playlistRequests.count) loads for \(run.segments) segments")
    }
}
