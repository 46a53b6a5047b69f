import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore

/// Packed audio segments made from ffmpeg-encoded AAC, MP3, AC-3 and E-AC-3; the ground truth's
/// times come from ffprobe's packet list, not from id3-meter's frame walker.
@Suite("Packed audio")
struct PackedAudioTests {
    @Test(arguments: ["aac", "mp3", "ac3", "ec3"])
    func everyTagWithItsTimeInAPackedAudioPlaylist(format: String) async throws {
        let expected = try Samples.expected("packed/\(format)/expected.jsonl")
        let events = await Samples.scan(Samples.path("packed/\(format)/index.m3u8"))
        #expect(events.failures.isEmpty)
        #expect(events.malformed == [])
        #expect(events.frames(segmentNames: true) == expected.map(FoundFrame.init))
        // The opening tag carries the segment's timestamp; the one inside is timed by the frames before it.
        #expect(Set(events.tags.map(\.pts)).count == 6)
    }

    @Test func aSinglePackedAudioFile() async throws {
        let expected = try Samples.expected("packed/aac/expected.jsonl").filter { $0.segment == "seg1.aac" }
        let events = await Samples.scan(Samples.path("packed/aac/seg1.aac"))
        #expect(events.failures.isEmpty)
        #expect(events.frames() == expected.map { FoundFrame(pts: $0.pts, id: $0.id, label: $0.owner ?? $0.description, segment: nil) })
    }

    @Test func lostSyncIsSkippedAndReported() throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Samples.path("packed/ac3/seg0.ac3"))))
        let tagEnd = try ID3TagParser.parse(bytes, at: 0).get().byteCount
        bytes.insert(contentsOf: [0x01, 0x02, 0x03, 0x04, 0x05], at: tagEnd + 100)  // inside the second frame
        var events: [MediaEvent] = []
        var extractor = MediaForm.packedAudio.makeExtractor(origin: TagOrigin(source: "damaged.ac3"))
        extractor.extract(bytes) { events.append($0) }
        #expect(events.tags.count == 2, "the tags on both sides of the damage survive")
        #expect(events.malformed.count == 1)
        #expect(events.malformed.first?.reason == .strayBytes(5))
    }

    @Test func theMeterPlaysPackedAudioInOrder() throws {
        let run = try Command.run(["--speed", "max", "--format", "jsonl", Samples.path("packed/mp3/index.m3u8")])
        #expect(run.status == 0)
        let expected = try Samples.expected("packed/mp3/expected.jsonl").filter(\.nielsen).map(Command.Send.init)
        #expect(run.sends == expected)
    }
}
