import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
@testable import ID3MeterReport
import SampleGenerator

@Suite("QA report")
struct QAReportTests {
    static func report(_ input: String, tolerances: QATolerances = QATolerances()) async -> SourceReport {
        var builder = SourceReportBuilder(source: input, tolerances: tolerances)
        await Samples.scan(input).forEach { builder.add($0) }
        return builder.report
    }

    @Test func findsEveryPlantedDefectWithItsTimeAndNothingElse() async throws {
        let planted = try JSONDecoder().decode(PlantedDefects.self, from: Data(contentsOf: URL(fileURLWithPath: Samples.path("qa/defects.planted.json"))))
        let report = await Self.report(Samples.path("qa/defects.ts"))
        #expect(report.placeholderTags.map(\.pts) == planted.placeholder)
        #expect(report.shortGaps.map(\.at.pts) == planted.shortGaps)
        #expect(report.longGaps.map(\.at.pts) == planted.longGaps)
        #expect(report.duplicates.map(\.pts) == planted.duplicates)
        #expect(report.invalidTags.map(\.pts) == planted.invalid)
        #expect(report.invalidByReason == ["breakout": 1])
        #expect(report.discontinuities.map(\.pts) == planted.discontinuities)
        #expect(report.longestGap?.seconds == planted.longestGap)
        #expect(report.malformedPackets.isEmpty && report.failures.isEmpty && report.segmentsWithoutTags.isEmpty)
        #expect(report.invalidTags.first?.time == Double(planted.invalid[0]) / 90_000)
        // The Validator tolerates a few spacing errors (its guide's 7 for tests 4 and 5); the
        // duplicate and the breakout tolerate none.
        #expect(Set(report.failedChecks) == ["duplicates", "breakout"])
        let row = Dictionary(uniqueKeysWithValues: report.checks.map { ($0.name, $0) })
        #expect(row["tag_duration"]?.count == planted.shortGaps.count + planted.longGaps.count)
        #expect(row["tag_duration"]?.result == "Pass <2/0/7>" && row["tag_duration"]?.test == 5)
        #expect(row["time_gap"]?.count == 1, "the 20 s spacing is 10 s past a 10 s tag")
        #expect(report.timeGaps.map(\.at.pts) == planted.longGaps)
        let strict = await Self.report(Samples.path("qa/defects.ts"), tolerances: QATolerances(["tag_duration": 0, "time_gap": 0]))
        #expect(Set(strict.failedChecks) == ["duplicates", "breakout", "tag_duration", "time_gap"])
    }

    @Test func aCleanStreamPassesEveryCheck() async {
        let report = await Self.report(Samples.path("spec/standard-60.ts"))
        #expect(report.failedChecks == [])
        #expect(report.shortGaps.isEmpty && report.longGaps.isEmpty && report.discontinuities.isEmpty)
        #expect(report.placeholderTags.count == 1, "placeholders are reported, and fail nothing")
        let keys = ["sequence_number", "cid_sid", "cid_timestamp", "info_tag_cid", "info_tag_offset"]
        // The spec writer's stream has no audio: nothing to place the tags against, no duration.
        #expect(report.checks.filter { $0.status == .noStatus }.map(\.name) == keys + ["tag_placement", "emsg_value", "coverage"])
        #expect(report.checks.first { $0.name == "tag_placement" }?.basis == "no audio stream in the program")
        // libavformat's muxer over the ffmpeg CLI's audio and video: placed and covered.
        let muxed = await Self.report(Samples.path("ts/nielsen.ts"))
        #expect(muxed.failedChecks == [])
        #expect(muxed.checks.filter { $0.status == .noStatus }.map(\.name) == keys + ["emsg_value"])
        #expect(muxed.mediaSeconds.map { abs($0 - 40) < 0.1 } == true, "the ffmpeg CLI wrote 40 s: \(String(describing: muxed.mediaSeconds))")
    }

    @Test func segmentsWithoutATagAreNamed() async throws {
        let playlist = try String(contentsOfFile: Samples.path("hls/low/low.m3u8"), encoding: .utf8)
        let segments = playlist.split(separator: "\n").filter { $0.hasSuffix(".ts") }.map(String.init)
        let tagged = Set(try Samples.expected("hls/expected.jsonl").filter(\.nielsen).compactMap(\.segment))
        let report = await Self.report(Samples.path("hls/master.m3u8"))
        #expect(report.segments == segments.count)
        #expect(report.segmentsWithoutTags.map(Location.name) == segments.filter { !tagged.contains($0) })
        #expect(report.discontinuities.isEmpty)
    }

    /// Nielsen's envelope (test 2): 271 bytes, ID3v2.4, one PRIV frame ending in 'A'. A
    /// packed-audio segment's first tag may hold its timestamp PRIV beside the Nielsen frame:
    /// players read both, so that frame is not held against the tag.
    @Test func theEnvelopeIsJudgedOnTheNielsenFrame() throws {
        func tag(_ frames: [[UInt8]], version: UInt8 = 4) throws -> ID3Tag {
            try ID3TagParser.parse(ID3Bytes.tag(version: version, body: frames.flatMap { $0 }), at: 0).get()
        }
        let nielsen = ID3Bytes.v24Frame("PRIV", Array(NielsenTagTests.sample.utf8) + [0, UInt8(ascii: "A")])
        let stamp = ID3Bytes.v24Frame("PRIV", Array("com.apple.streaming.transportStreamTimestamp".utf8) + [0, 0, 0, 0, 0, 0, 0, 0x1F, 0x40])
        let bare = ID3Bytes.v24Frame("PRIV", Array(NielsenTagTests.sample.utf8) + [0])
        #expect(try tag([nielsen]).byteCount == 271)
        #expect(SourceReportBuilder.envelopeProblems(try tag([nielsen])) == [])
        #expect(SourceReportBuilder.envelopeProblems(try tag([stamp, nielsen])) == [], "the segment's timestamp beside it")
        #expect(SourceReportBuilder.envelopeProblems(try tag([stamp, bare])) == ["no private byte after the owner (-3)"])
        #expect(SourceReportBuilder.envelopeProblems(try tag([nielsen, nielsen])) == ["2 frames, not one PRIV", "532 bytes, not 271"])
    }

    /// A variant and its audio rendition are the same stretch of media: their segments' EXTINF
    /// count once in the media's duration.
    @Test func aVariantAndItsRenditionCountTheirMediaOnce() async throws {
        let playlist = try String(contentsOfFile: Samples.path("spec/hls/index.m3u8"), encoding: .utf8)
        let extinf = playlist.split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") }
            .compactMap { Double($0.dropFirst("#EXTINF:".count).prefix { $0 != "," }) }.reduce(0, +)
        let report = await Self.report(Samples.path("renditions/both-carry.m3u8"))
        #expect(report.segments == 6, "the variant's three and the rendition's three")
        #expect(report.mediaSeconds == extinf)
        #expect(report.failedChecks == [])
    }

    @Test func aDeclaredDiscontinuityIsNotAGap() async {
        let report = await Self.report(Samples.path("spec/hls/index.m3u8"))
        #expect(report.discontinuities.map(\.segment).map { $0.map(Location.name) } == ["part2.ts"])
        #expect(report.longGaps.isEmpty, "the PTS step back at the discontinuity is not measured as a gap")
    }

    @Test func totalsAddUpAcrossSources() async {
        var qa = QAReport()
        await qa.add(Self.report(Samples.path("qa/defects.ts")))
        await qa.add(Self.report(Samples.path("spec/standard-60.ts")))
        var unreadable = SourceReportBuilder(source: "missing.ts")
        unreadable.add(.failure(InputFailure(source: "missing.ts", .cannotOpen(FetchError.file(errno: ENOENT)))))
        qa.add(unreadable.report)
        #expect(qa.total.sources == 3)
        #expect(qa.total.nielsenTags == 9 + 4)
        #expect(qa.total.unreadableSources == ["missing.ts"])
        #expect(qa.failedChecks["read_errors"] == ["missing.ts"])
        #expect(qa.failedChecks["duplicates"] == [Samples.path("qa/defects.ts")])
        let json = try? JSONSerialization.jsonObject(with: Data(qa.json().utf8)) as? [String: Any]
        #expect((json?["sources"] as? [Any])?.count == 3)
        #expect(qa.text().contains("duplicate at 62.000 s (pts 5580000)"))
    }

    /// The media's duration is the sum, in segment order, of each segment's longest duration
    /// (a rendition's copy of a segment counts once), however the segments come: in order (a
    /// live stream's, summed as they come), with copies, with parts, or shuffled. Checked as
    /// they come against a model that sums the sorted durations each time.
    @Test(arguments: ["in order", "with copies", "with parts", "shuffled"])
    func theMediaDurationIsTheSortedSumHoweverSegmentsCome(_ arrangement: String) {
        var random = SeededRandom(seed: 20261129)
        let durations = [2.002, 2, 1.5, 6.006, 0.1, 3.003, 2.0000001]
        var segments: [TagOrigin.Segment] = []
        for discontinuity in 0..<3 {
            for sequence in 0..<40 {
                var segment = TagOrigin.Segment(uri: "s\(sequence).ts", mediaSequence: sequence, discontinuitySequence: discontinuity,
                                                duration: durations[Int(random.next() % UInt64(durations.count))])
                if arrangement == "with parts", random.next() % 4 == 0 {
                    var first = segment
                    first.part = TagOrigin.Part(offset: 0, isLast: false)
                    segments.append(first)
                    segment.part = TagOrigin.Part(offset: 0.8, isLast: true)
                }
                segments.append(segment)
                if arrangement == "with copies", random.next() % 3 == 0 {
                    segment.duration = durations[Int(random.next() % UInt64(durations.count))]
                    segments.append(segment)
                }
            }
        }
        if arrangement == "shuffled" { segments.shuffle(using: &random) }
        struct Key: Hashable, Comparable {
            var discontinuity: Int, sequence: Int, part: Int
            static func < (a: Key, b: Key) -> Bool { (a.discontinuity, a.sequence, a.part) < (b.discontinuity, b.sequence, b.part) }
        }
        var model: [Key: Double] = [:]
        var builder = SourceReportBuilder(source: arrangement, listingFindings: false)
        for (index, segment) in segments.enumerated() {
            builder.add(.segment(segment))
            let key = Key(discontinuity: segment.discontinuitySequence, sequence: segment.mediaSequence,
                          part: segment.part.map { Int(($0.offset * 1_000).rounded()) } ?? 0)
            model[key] = max(model[key] ?? 0, segment.duration ?? 0)
            guard index % 7 == 0 || index == segments.count - 1 else { continue }
            let expected = model.sorted { $0.key < $1.key }.reduce(0) { $0 + $1.value }
            #expect(builder.report.mediaSeconds == expected, "after \(index + 1) segments")
        }
    }

    /// A list past its 1,000 entries counts the rest under `omitted`, and the totals still count all.
    @Test func listsKeepAThousandAndCountTheRest() throws {
        var builder = SourceReportBuilder(source: "long")
        for sequence in 0..<1_500 {
            builder.add(.segment(TagOrigin.Segment(uri: "seg\(sequence).ts", mediaSequence: sequence, discontinuitySequence: 0)))
        }
        let report = builder.report
        #expect(report.segmentsWithoutTags.count == SourceReport.keptFindings)
        #expect(report.omitted["segments_without_tags"] == 500)
        var qa = QAReport()
        qa.add(report)
        #expect(qa.total.segmentsWithoutTags == 1_500 && qa.total.segments == 1_500)
        #expect(qa.text().contains("500 more segments_without_tags not listed"))
        // Tags a second apart, the same payload (with the placeholder PC CID) each time: short
        // gaps, duplicates and placeholders past their thousand, each list counted on its own.
        var tags = SourceReportBuilder(source: "dense")
        let tag = try ID3TagParser.parse(ID3Bytes.tag(version: 4, body: ID3Bytes.v24Frame("PRIV", Array(NielsenTagTests.sample.utf8) + [0])), at: 0).get()
        for second in 0..<2_600 {
            tags.add(.tag(TimedTag(tag: tag, pts: Int64(second) * 90_000, origin: TagOrigin(source: "dense"))))
        }
        let dense = tags.report
        #expect(dense.shortGaps.count == 1_000 && dense.omitted["short_gaps"] == 1_599)
        #expect(dense.duplicates.count == 1_000 && dense.omitted["duplicates"] == 1_599)
        #expect(dense.placeholderTags.count == 1_000 && dense.omitted["placeholder_tags"] == 1_600)
        #expect(dense.omitted.keys.sorted() == ["duplicates", "placeholder_tags", "short_gaps", "structure"], "\(dense.omitted)")
        #expect(dense.structure.count == 1_000 && dense.omitted["structure"] == 1_600, "the PRIV frame has no private byte 'A'")
    }

    /// The duplicate check's table against the standard library's `Set`, over payloads drawn
    /// from a small pool (many repeats) and a large one, through many growths.
    @Test func seenPayloadsAgreeWithASet() {
        var random = SeededRandom(seed: 15)
        for pool in [50, 100_000] {
            var table = SeenPayloads(), reference = Set<String>()
            for _ in 0..<30_000 {
                let payload = NielsenTagTests.sample + String(random.next() % UInt64(pool))
                #expect(table.insert(payload) == reference.insert(payload).inserted)
            }
        }
    }

    /// Without a report to write, findings are counted and not listed: the checks and totals
    /// (what `--strict` and the summary use) are those of a builder that lists them.
    @Test func countingWithoutListingGivesTheSameChecksAndTotals() async throws {
        let inputs = ["qa/defects.ts", "quirks/hls/index.m3u8", "lenient/garbage.ts", "lenient/cut.ts", "hls/master.m3u8", "spec/hls/index.m3u8"]
        var listing = QAReport(), counting = QAReport()
        for input in inputs.map(Samples.path) {
            var lists = SourceReportBuilder(source: input), counts = SourceReportBuilder(source: input, listingFindings: false)
            for event in await Samples.scan(input) {
                lists.add(event)
                counts.add(event)
            }
            #expect(counts.report.failedChecks == lists.report.failedChecks, "\(input)")
            #expect(counts.report.shortGaps.isEmpty && counts.report.duplicates.isEmpty && counts.report.segmentsWithoutTags.isEmpty)
            listing.add(lists.report)
            counting.add(counts.report)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(try encoder.encode(counting.total) == encoder.encode(listing.total))
        #expect(counting.failedChecks == listing.failedChecks)
        #expect(Set(listing.failedChecks.keys).isSuperset(of: ["duplicates", "breakout", "tag_format"]),
                "the inputs fail most checks: \(listing.failedChecks.keys.sorted())")
    }
}
