import Foundation
import Testing
import SampleGenerator

/// A live playlist of 300,000 segments (15 MB, an EVENT playlist a week long), reloaded every
/// second: a reload costs what changed, not the whole playlist again, and memory stays bounded.
@Suite("A huge live playlist", .serialized, .timeLimit(.minutes(3)))
struct HugePlaylistTests {
    static let listed = 300_000

    /// The playlist at `published` segments: a fixed front, then the segments since.
    final class HugePlaylist: Sendable {
        let front: String
        let started = Date()
        let stream = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: HugePlaylistTests.listed, bitrate: 100_000)

        init() {
            var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXT-X-PLAYLIST-TYPE:EVENT\n#EXT-X-MEDIA-SEQUENCE:0\n"
            text.reserveCapacity(16 << 20)
            for index in 0..<HugePlaylistTests.listed {
                if index % 10 == 0 {
                    text += "#EXT-X-PROGRAM-DATE-TIME:2026-11-24T00:00:00.000Z\n"
                }
                text += "#EXTINF:1.000,\nsegment-of-a-long-event-\(index).ts\n"
            }
            front = text
        }

        var published: Int { HugePlaylistTests.listed + Int(Date().timeIntervalSince(started)) }

        func respond(to request: LocalHTTPServer.Request) -> LocalHTTPServer.Response {
            if request.path == "live.m3u8" {
                var text = front
                for index in HugePlaylistTests.listed..<published { text += "#EXTINF:1.000,\nsegment-of-a-long-event-\(index).ts\n" }
                return LocalHTTPServer.Response(body: Array(text.utf8))
            }
            guard let index = Int(request.path.dropFirst("segment-of-a-long-event-".count).dropLast(3)), index < published else {
                return .notFound
            }
            return LocalHTTPServer.Response(body: stream.segment(index))
        }
    }

    @Test func reloadingItCostsWhatChangedAndMemoryStaysBounded() throws {
        let playlist = HugePlaylist()
        #expect(playlist.front.utf8.count > 14_000_000)
        let server = try LocalHTTPServer { playlist.respond(to: $0) }
        defer { server.stop() }
        let run = try MeasuredRun.run([server.url("live.m3u8"), "--format", "jsonl", "--duration", "8", "--fps", "30",
                                       "--max-playlist-size", "64M"])
        print("huge playlist: \(run.seconds) s, peak \(run.peakMiB) MiB")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Command.Send.records(in: run.stdout).count >= 14, "\(run.stderr)")
        #expect(run.peakMiB < 120, "peak \(run.peakMiB) MiB")
    }
}
