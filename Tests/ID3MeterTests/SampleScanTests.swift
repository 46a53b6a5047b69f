import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore

/// End to end on real bytes: every sample scanned (libavformat's I/O), compared with
/// the list of frames the generator wrote into it.
@Suite("Scanning the samples", .timeLimit(.minutes(3)))
struct SampleScanTests {
    static let files = [
        "ts/nielsen", "ts/nielsen-v23", "ts/nielsen-unsync",  // libavformat's muxer
        "spec/standard-60", "spec/v23-184", "spec/unsync-60",  // the independent writer
    ]

    @Test(arguments: files)
    func everyFrameOfATransportStreamFile(name: String) async throws {
        let expected = try Samples.expected("\(name).expected.jsonl")
        let events = await Samples.scan(Samples.path("\(name).ts"))
        #expect(events.failures.isEmpty)
        #expect(events.malformed == [])
        #expect(events.frames() == expected.map(FoundFrame.init))
        // A cut header whose frames are all under 128 bytes reads alike as v2.3 and v2.4 and is
        // taken as v2.4; Nielsen's 251-byte PRIV frame always tells them apart.
        let tagOfEachFrame = events.tags.flatMap { timed in timed.tag.frames.map { _ in timed.tag } }
        #expect(tagOfEachFrame.count == expected.count)
        for (tag, frame) in zip(tagOfEachFrame, expected) {
            let ambiguous = tag.notes.contains { $0.contains("2.3 or 2.4") }
            if frame.nielsen { #expect(!ambiguous) }
            #expect(tag.version.rawValue == (ambiguous ? ID3Tag.Version.v2_4.rawValue : frame.version))
        }
    }

    @Test func nielsenTagsCarryTheirShapeChecks() async throws {
        let nielsen = await Samples.scan(Samples.path("ts/nielsen.ts")).tags.flatMap(\.nielsenTags)
        let expected = try Samples.expected("ts/nielsen.expected.jsonl").filter(\.nielsen)
        #expect(nielsen.map(\.payload) == expected.compactMap(\.owner))
        #expect(nielsen.allSatisfy { $0.isValid })
        #expect(nielsen.map(\.hasPlaceholderPCCID) == expected.map { $0.owner?.contains(NielsenTag.placeholderCID) == true })
    }

    @Test(arguments: [VariantChoice.lowestBandwidth, .highestBandwidth])
    func hlsVODEitherVariantClearOrEncrypted(variant: VariantChoice) async throws {
        let expected = try Samples.expected("hls/expected.jsonl")
        let events = await Samples.scan(Samples.path("hls/master.m3u8"), variant: variant)
        #expect(events.failures.isEmpty)
        #expect(events.frames(segmentNames: true) == expected.map(FoundFrame.init))
        let folder = variant == .lowestBandwidth ? "low" : "high"
        #expect(events.tags.allSatisfy { $0.origin.segment?.uri.contains("/hls/\(folder)/") == true })
    }

    @Test func hlsSegmentsKnowSequenceDiscontinuityAndDate() async throws {
        let expected = try Samples.expected("spec/hls/expected.jsonl")
        let events = await Samples.scan(Samples.path("spec/hls/index.m3u8"))
        #expect(events.failures.isEmpty)
        #expect(events.frames(segmentNames: true) == expected.map(FoundFrame.init))
        let segments = events.tags.compactMap(\.origin.segment)
        #expect(Set(segments.map(\.mediaSequence)) == [0, 1, 2])
        #expect(segments.map(\.discontinuitySequence) == segments.map { $0.mediaSequence == 2 ? 1 : 0 })
        // The playlist dates part0 at 1795000000 and each part starts at its first PES (the first tag).
        let first = try #require(events.tags.first)
        #expect(first.programDateTime == Date(timeIntervalSince1970: 1_795_000_000))
        let second = try #require(events.tags.dropFirst().first)
        #expect(second.programDateTime == Date(timeIntervalSince1970: 1_795_000_000.5))
    }

    @Test func aPlaylistWithAMissingSegmentStillScansTheOthers() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = Samples.folder.appendingPathComponent("spec/hls")
        for part in ["part0.ts", "part2.ts"] {
            try FileManager.default.copyItem(at: source.appendingPathComponent(part), to: folder.appendingPathComponent(part))
        }
        try FileManager.default.copyItem(at: source.appendingPathComponent("index.m3u8"), to: folder.appendingPathComponent("index.m3u8"))
        let playlist = folder.appendingPathComponent("index.m3u8").path
        let events = await Samples.scan(playlist)
        let expected = try Samples.expected("spec/hls/expected.jsonl").filter { $0.segment != "part1.ts" }
        #expect(events.frames(segmentNames: true) == expected.map(FoundFrame.init))
        #expect(events.failures.count == 1)
        #expect(events.failures.first?.source == playlist)
        #expect(events.failures.first?.segment == folder.appendingPathComponent("part1.ts").path)
    }

    @Test func foldersYieldEachTagOnce() async throws {
        let expansion = await InputExpansion.expand([Samples.folder.path], scanner: TagScanner())
        let names = expansion.inputs.map { $0.replacingOccurrences(of: Samples.folder.path + "/", with: "") }
        // Playlists referred to by others (the renditions' masters) are read through them, not again;
        // spec/standard-60.ts is read through byterange/ts.m3u8, whose sub-ranges cover it.
        // An MPD's segments of every Representation are read through it. Two of ffmpeg 5.1's files no
        // MPD names: dash/time's first audio file is named by its decode time (-1024) where its MPD
        // says 0, and dash/number's fourth audio segment lies past the Period's 12 s.
        #expect(names == ["byterange/fmp4.m3u8", "byterange/packed.m3u8", "byterange/ts.m3u8",
                          "dash/events/manifest.mpd", "dash/indexed/manifest.mpd", "dash/number/chunk-1-4.m4s", "dash/number/manifest.mpd",
                          "dash/periods/manifest.mpd", "dash/protected/manifest.mpd", "dash/repeats/manifest.mpd", "dash/template-index/manifest.mpd",
                          "dash/time/chunk-1--1024.m4s", "dash/time/manifest.mpd", "dash/timeline/manifest.mpd",
                          "fmp4/index.m3u8", "hls/master.m3u8",
                          // The ladders' masters read their variants, which read hls/low's segments.
                          "ladder/dash/manifest.mpd", "ladder/master-faulty.m3u8", "ladder/master-intact.m3u8", "ladder/master-untagged.m3u8",
                          "lenient/cut.ts", "lenient/extended-flag.ts", "lenient/garbage.ts", "lenient/undecodable.ts",
                          "lenient/v23-syncsafe.ts", "lenient/v24-frame-unsync.ts", "lenient/v24-whole-unsync.ts",
                          "mpts/hls/index.m3u8", "mpts/one-tagged.ts", "mpts/two-programs.ts",
                          "packed/ac3/index.m3u8", "packed/ec3/index.m3u8", "packed/mp3/index.m3u8",
                          // The protected master reads ts/ and packed/ (mislabelled.m3u8 also lists ts/seg1.ts).
                          "protected/fmp4-cbcs/index.m3u8", "protected/fmp4-cenc/index.m3u8", "protected/master.m3u8",
                          "protected/mislabelled.m3u8",
                          "qa/defects.ts", "quirks/hls/index.m3u8", "quirks/quirks.ts",
                          "renditions/audio-carries.m3u8", "renditions/both-carry.m3u8",
                          "spec/unsync-60.ts", "spec/v23-184.ts",
                          "ts/nielsen-unsync.ts", "ts/nielsen-v23.ts", "ts/nielsen.ts",
                          "validator/clean.ts", "validator/emsg_value.m4s", "validator/fd_offset_drift.ts", "validator/info_every_300s.ts",
                          "validator/no_descriptor.ts", "validator/no_info_tags.ts", "validator/no_private_byte.ts", "validator/null_cid_offset.ts",
                          "validator/one_long_spacing.ts", "validator/pc_offset_drift.ts", "validator/pes_without_pts.ts", "validator/placeholder_run.ts",
                          "validator/tags_off_audio.ts", "validator/tags_stop_early.ts", "validator/time_gap.ts",
                          "validator/two_pids.ts"])
    }
}
