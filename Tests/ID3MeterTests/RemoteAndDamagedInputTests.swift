import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

@Suite("Remote and damaged inputs", .timeLimit(.minutes(3)))
struct RemoteAndDamagedInputTests {
    @Test func hlsOverHTTPMatchesTheGroundTruth() async throws {
        let server = try LocalHTTPServer(serving: Samples.folder)
        defer { server.stop() }
        let expected = try Samples.expected("hls/expected.jsonl")
        let events = await Samples.scan(server.url("hls/master.m3u8"), variant: .highestBandwidth)
        #expect(events.failures.isEmpty)
        #expect(events.frames(segmentNames: true) == expected.map(FoundFrame.init))
        #expect(events.tags.first?.origin.segment?.uri == server.url("hls/high/seg0.ts"))
        #expect(server.requests.filter { $0.path == "hls/high/key.bin" }.count == 1, "the key is fetched once")
    }

    @Test func aTransportStreamOverHTTP() async throws {
        let server = try LocalHTTPServer(serving: Samples.folder)
        defer { server.stop() }
        let expected = try Samples.expected("spec/unsync-60.expected.jsonl")
        let events = await Samples.scan(server.url("spec/unsync-60.ts"))
        #expect(events.failures.isEmpty)
        #expect(events.frames() == expected.map(FoundFrame.init))
    }

    @Test func aMissingRemoteSegmentIsReportedAndTheRestScanned() async throws {
        let server = try LocalHTTPServer { request in
            request.path == "spec/hls/part1.ts" ? .notFound : .file(request.path, in: Samples.folder)
        }
        defer { server.stop() }
        let events = await Samples.scan(server.url("spec/hls/index.m3u8"))
        let expected = try Samples.expected("spec/hls/expected.jsonl").filter { $0.segment != "part1.ts" }
        #expect(events.frames(segmentNames: true) == expected.map(FoundFrame.init))
        #expect(events.failures.map(\.segment) == [server.url("spec/hls/part1.ts")])
        guard case .http(404, _)? = events.failures.first?.fetchFailure?.error else { Issue.record("\(events.failures)"); return }
    }

    @Test func theDemuxerListsStreamsAndTheDeclaredFrameRate() throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Samples.path("ts/nielsen.ts"))))
        let streams = try StreamProbe.streams(in: Array(bytes.prefix(StreamProbe.prefixBytes)))
        let video = try #require(streams.first { $0.isVideo })
        #expect(video.frameRate == StreamProbe.FrameRate(numerator: 30_000, denominator: 1_001))
        #expect(streams.filter(\.isTimedID3).count == 1)
    }

    /// Truncated and bit-flipped copies: no crash, no hang, and the tags before the damage survive.
    @Test func damagedTransportStreamsNeverCrash() async throws {
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Samples.path("spec/standard-60.ts"))))
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var random = SeededRandom(seed: 5)
        for round in 0..<40 {
            var bytes = Array(original.prefix(Int.random(in: 188...original.count, using: &random)))
            for _ in 0..<(round % 4) * 10 {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            }
            let file = folder.appendingPathComponent("damaged\(round).ts")
            try Data(bytes).write(to: file)
            let events = await Samples.scan(file.path)
            if round % 4 == 0 {
                // Only truncated: every tag whose packets were all there is found, exactly.
                let found = events.frames().map(\.label)
                let expected = try Samples.expected("spec/standard-60.expected.jsonl").map { $0.owner ?? $0.description }
                #expect(Array(expected.prefix(found.count)) == found)
            }
        }
    }
}

/// Damage at a known place: every tag whose TS packets were left alone must still come out.
@Suite("Damaged media")
struct DamagedMediaTests {
    /// The spec writer's stream, with the byte range each scheduled packet occupies.
    static func stream() -> (bytes: [UInt8], packets: [(range: Range<Int>, frames: [String])]) {
        let schedule = TagSchedule(flavour: .standard, startPTS: 900_000, duration: 60, seed: 41)
        var writer = TransportStreamWriter(payloadPerPacket: 60)
        var bytes = writer.programTables()
        var packets: [(Range<Int>, [String])] = []
        for packet in schedule.packets {
            let start = bytes.count
            bytes += writer.pes(pts: packet.pts, payload: packet.bytes)
            let labels = packet.tags.flatMap(\.frames).map { frame in
                String(decoding: frame.data.dropFirst(frame.id == "TXXX" ? 1 : 0).prefix { $0 != 0 }, as: UTF8.self)
            }
            packets.append((start..<bytes.count, labels))
        }
        return (bytes, packets)
    }

    static func scanLabels(_ bytes: [UInt8]) async throws -> [String?] {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("damaged.ts")
        try Data(bytes).write(to: file)
        return await Samples.scan(file.path).frames().map(\.label)
    }

    @Test(arguments: [
        "lost sync",          // 37 stray bytes inside a packet's run: the demuxer must resynchronise
        "continuity error",   // one TS packet of a tag dropped
        "random overwrite",   // a run of random bytes over a tag
    ])
    func tagsAwayFromTheDamageSurvive(damage: String) async throws {
        var (bytes, packets) = Self.stream()
        let victim = packets.count / 2
        let range = packets[victim].range
        switch damage {
        case "lost sync": bytes.insert(contentsOf: [UInt8](repeating: 0x5A, count: 37), at: range.lowerBound + 188)
        case "continuity error": bytes.removeSubrange(range.lowerBound + 188..<range.lowerBound + 376)
        default:
            var random = SeededRandom(seed: 3)
            bytes.replaceSubrange(range.lowerBound + 10..<range.lowerBound + 300, with: random.bytes(290))
        }
        let found = try await Self.scanLabels(bytes)
        let untouched = packets.enumerated().filter { $0.offset != victim }.flatMap(\.element.frames)
        // Every untouched tag, in order; the damaged one may be gone, but nothing else is.
        #expect(found.compactMap { $0 }.filter { untouched.contains($0) } == untouched)
        #expect(found.count <= untouched.count + packets[victim].frames.count)
    }
}
