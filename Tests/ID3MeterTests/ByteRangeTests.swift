import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator
import Synchronization

/// EXT-X-BYTERANGE (RFC 8216 §4.3.2.2) and EXT-X-MAP BYTERANGE, over playlists that
/// scripts/byterange_samples.py wrote on the independently written samples.
@Suite("Byte ranges", .timeLimit(.minutes(2)))
struct ByteRangeTests {
    static func expected(_ name: String) throws -> [FoundFrame] {
        try Samples.expected("byterange/\(name).expected.jsonl").map(FoundFrame.init)
    }

    /// A TS file in three sub-ranges cut inside packets (two without an offset): exactly the file's tags.
    @Test(arguments: ["ts", "packed", "fmp4"])
    func aByteRangePlaylistYieldsTheTagsOfItsFile(name: String) async throws {
        let events = await Samples.scan(Samples.path("byterange/\(name).m3u8"))
        #expect(events.failures.isEmpty)
        #expect(events.warnings.isEmpty, "no packet is cut: the next sub-range continues it")
        #expect(events.frames(segmentNames: true) == (try Self.expected(name)))
    }

    @Test(arguments: ["ts", "packed", "fmp4"])
    func overHTTPEachSubRangeIsARangeRequest(name: String) async throws {
        let server = try LocalHTTPServer(serving: Samples.folder)
        defer { server.stop() }
        let url = server.url("byterange/\(name).m3u8")
        let events = await Samples.scan(url)
        #expect(events.failures.isEmpty)
        #expect(events.frames(segmentNames: true) == (try Self.expected(name)))
        let ranges = server.requests.compactMap { $0.headers["range"] }
        #expect(ranges.count >= 3, "\(server.requests.map(\.path))")
        #expect(ranges.allSatisfy { $0.hasPrefix("bytes=") })
    }

    @Test func theMeterPlaysByteRangesToo() async throws {
        let result = try await offThePool { try Command.run(["--speed", "max", "--format", "jsonl", Samples.path("byterange/ts.m3u8")]) }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.sends == (try Samples.expected("byterange/ts.expected.jsonl")).filter(\.nielsen).map(Command.Send.init))
    }

    @Test func rangesWithoutAnOffsetFollowThePreviousOneOfTheSameResource() throws {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\n#EXT-X-BYTERANGE:100@50\na.ts\n#EXTINF:2,\n#EXT-X-BYTERANGE:30\na.ts\n"
            + "#EXTINF:2,\n#EXT-X-BYTERANGE:7@0\nb.ts\n#EXTINF:2,\n#EXT-X-BYTERANGE:5\na.ts\n"
        guard case .media(let media) = try PlaylistParser.parse(text, location: "/x/index.m3u8") else { Issue.record(); return }
        #expect(media.segments.map(\.byteRange) == [ByteRange(offset: 50, length: 100), ByteRange(offset: 150, length: 30),
                                                   ByteRange(offset: 0, length: 7), ByteRange(offset: 180, length: 5)])
        #expect(throws: PlaylistError.self) {
            try PlaylistParser.parse("#EXTM3U\n#EXTINF:2,\n#EXT-X-BYTERANGE:30\na.ts\n", location: "/x/index.m3u8")
        }
    }

    /// A live playlist of sub-ranges, growing between loads: each sub-range once, the tags of the file.
    @Test(.timeLimit(.minutes(1))) func aLivePlaylistOfSubRanges() async throws {
        let size = try FileManager.default.attributesOfItem(atPath: Samples.path("spec/standard-60.ts"))[.size] as! Int
        let ranges = ["#EXT-X-BYTERANGE:5000@0", "#EXT-X-BYTERANGE:7000", "#EXT-X-BYTERANGE:\(size - 12_000)"]
        let loads = Mutex(0)
        let server = try LocalHTTPServer { request in
            guard request.path == "live.m3u8" else { return .file(request.path, in: Samples.folder) }
            let load = loads.withLock { $0 += 1; return $0 }
            let shown = min(load + 1, 3)
            let lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:1", "#EXT-X-MEDIA-SEQUENCE:0"]
                + ranges.prefix(shown).flatMap { ["#EXTINF:1,", $0, "spec/standard-60.ts"] } + (shown == 3 ? ["#EXT-X-ENDLIST"] : [])
            return LocalHTTPServer.Response(body: Array(lines.joined(separator: "\n").utf8))
        }
        defer { server.stop() }
        var events: [MediaEvent] = []
        for await event in TagSource(input: server.url("live.m3u8"), liveStart: 5, clock: ContinuousClock()).caught({ .failure($0) }) { events.append(event) }
        #expect(events.segments.map(\.mediaSequence) == [0, 1, 2])
        let expected = try Samples.expected("spec/standard-60.expected.jsonl").filter(\.nielsen).map(\.owner)
        #expect(events.tags.flatMap(\.nielsenTags).map(\.payload) == expected)
        #expect(loads.withLock { $0 } >= 2, "it was followed as a live playlist")
    }
}
