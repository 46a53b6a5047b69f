import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore

/// Tags written by mutagen and then got wrong the ways other tools do (scripts/lenient_samples.py):
/// every frame whose bytes are there is delivered, and a note says what was read around.
@Suite("Lenient ID3")
struct LenientID3Tests {
    @Test(arguments: [
        ("cut", "tag declares 750 bytes but only 720 are present: the 3 whole frames read"),
        ("garbage", "of the tag: the 29 bytes from there ignored, the 3 frames before read"),
        ("extended-flag", "extended-header flag set but no extended header: frames read from byte 10"),
        ("v24-whole-unsync", "ID3v2.4 tag unsynchronised as a whole, the ID3v2.3 way"),
        ("v24-frame-unsync", nil),
        ("v23-syncsafe", "ID3v2.3 tag written with sync-safe frame sizes"),
    ] as [(String, String?)])
    func everyWholeFrameIsDeliveredAndTheRecoveryNoted(sample: String, note: String?) async throws {
        let events = await Samples.scan(Samples.path("lenient/\(sample).ts"))
        #expect(events.failures.isEmpty && events.malformed == [])
        #expect(events.frames() == (try Samples.expected("lenient/\(sample).expected.jsonl")).map(FoundFrame.init))
        #expect(events.tags.flatMap(\.nielsenTags).count == 1, "the Nielsen tag is delivered")
        let notes = events.tags.flatMap(\.tag.notes)
        if let note { #expect(notes.contains { $0.contains(note) }, "\(notes)") } else { #expect(notes.isEmpty, "\(notes)") }
    }

    /// Private data too: the sync PRIV's 0xFF bytes come back whole under either unsynchronisation.
    @Test(arguments: ["v24-whole-unsync", "v24-frame-unsync"])
    func unsynchronisedPrivateDataIsRestored(sample: String) async throws {
        let tag = try #require(await Samples.scan(Samples.path("lenient/\(sample).ts")).tags.first)
        #expect(tag.tag.privFrames.first { $0.owner == "com.example.sync" }?.data == [0xFF, 0xE0, 0xFF, 0x00, 0xFF, 0xFB, 0xFF])
    }

    /// A frame that cannot be decoded is listed with its reason in `reason` (never as its owner),
    /// and the note is on its own record only; the Nielsen PRIV beside it is delivered.
    @Test func undecodableFramesSayWhyOnTheirOwnRecords() async throws {
        let events = await Samples.scan(Samples.path("lenient/undecodable.ts"))
        #expect(events.frames() == (try Samples.expected("lenient/undecodable.expected.jsonl")).map(FoundFrame.init))
        let records = events.flatMap { TagRecord.all(for: $0, allFrames: true) }
        #expect(records.map(\.reason) == ["compressed", nil, "encrypted", "frame shorter than its flags require"])
        #expect(records.map(\.owner) == [nil, nil, nil, nil])
        #expect(records[1].type == .nielsen && records[1].notes == nil, "no note about the other frames")
        #expect(records[2].notes == ["frame PRIV encrypted, not decoded"])
    }

    /// Every recovery is a count in the QA report.
    @Test func recoveriesAreCountedInTheQAReport() async throws {
        var builder = SourceReportBuilder(source: "lenient")
        for sample in ["cut", "garbage", "undecodable"] {
            await Samples.scan(Samples.path("lenient/\(sample).ts")).forEach { builder.add($0) }
        }
        let recoveries = builder.report.recoveries
        #expect(recoveries["frame not decoded: encrypted"] == 1)
        // The writer cut a 750-byte tag to 720 (scripts/lenient_samples.py): the note keeps its digits.
        #expect(recoveries["tag declares 750 bytes but only 720 are present: the 3 whole frames read"] == 1, "\(recoveries)")
        #expect(recoveries.values.reduce(0, +) == 5, "\(recoveries)")
    }
}
