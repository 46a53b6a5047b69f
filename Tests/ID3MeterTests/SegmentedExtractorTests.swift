import Testing
@testable import ID3MeterCore
import SampleGenerator

/// `SegmentedExtractor` on MPEG-TS written by the sample generator's own TS writer: three tags
/// of two packets each, their owners the ground truth.
@Suite("Segmented extractor")
struct SegmentedExtractorTests {
    static let owners = (0..<3).map { "www.nielsen.com/segment-test/\($0)" }
    static let stream: [UInt8] = {
        var writer = TransportStreamWriter()
        var bytes = writer.programTables()
        for (index, owner) in owners.enumerated() {
            let tag = ID3TagSpec(frames: [.priv(owner: owner, data: Array(repeating: 7, count: 200))]).bytes()
            bytes += writer.pes(pts: 900_000 + Int64(index) * 90_000, payload: tag)
        }
        return bytes
    }()

    struct Piece {
        var uri: String
        var sequence: Int
        var range: ByteRange?
        var bytes: ArraySlice<UInt8>
    }

    /// The owners of the tags read, and the failures, from `pieces` read as consecutive segments.
    static func read(_ pieces: [Piece]) -> (owners: [String], failures: [InputFailure]) {
        var extractor = SegmentedExtractor(source: "p.m3u8")
        var owners: [String] = []
        var failures: [InputFailure] = []
        let collect = { (event: MediaEvent) in
            switch event {
            case .tag(let timed):
                owners += timed.tag.frames.compactMap { if case .priv(let owner, _) = $0.content { owner } else { nil } }
            case .failure(let failure): failures.append(failure)
            default: break
            }
        }
        for piece in pieces {
            let origin = TagOrigin(source: "p.m3u8", segment: TagOrigin.Segment(uri: piece.uri, mediaSequence: piece.sequence))
            extractor.begin(origin, range: piece.range, initSegment: nil, emit: collect)
            Array(piece.bytes).withUnsafeBufferPointer { extractor.feed($0, emit: collect) }
            _ = extractor.end(keepingCut: piece.range != nil, emit: collect)
        }
        extractor.finish(emit: collect)
        return (owners, failures)
    }

    @Test func aTagCutBySegmentBoundariesIsReadOnce() {
        for cut in stride(from: 188, to: Self.stream.count, by: 188) {
            let read = Self.read([Piece(uri: "a.ts", sequence: 1, bytes: Self.stream[..<cut]),
                                  Piece(uri: "b.ts", sequence: 2, bytes: Self.stream[cut...])])
            #expect(read.owners == Self.owners, "cut at \(cut)")
            #expect(read.failures.isEmpty, "cut at \(cut): \(read.failures)")
        }
    }

    /// An error page served where a segment was due is not read as broken MPEG-TS (a player's
    /// demuxer fails it): one failure naming it, no damage, and the next segment reads whole.
    @Test func aResourceOfNoKnownFormIsOneFailureNotDamage() {
        var extractor = SegmentedExtractor(source: "p.m3u8")
        var events: [MediaEvent] = []
        let page = Array("<!DOCTYPE html><html><body>403 Forbidden</body></html>".utf8)
        extractor.append(page, origin: TagOrigin(source: "p.m3u8", segment: TagOrigin.Segment(uri: "a.ts", mediaSequence: 1))) { events.append($0) }
        let failures = events.compactMap { if case .failure(let failure) = $0 { failure } else { nil } }
        #expect(events.count == 1 && failures.count == 1, "\(events)")
        guard let failure = failures.first, case .unknownForm = failure.kind else { Issue.record("\(events)"); return }
        #expect(failure.segment == "a.ts")
        #expect(Self.read([Piece(uri: "a.ts", sequence: 1, bytes: page[...]), Piece(uri: "b.ts", sequence: 2, bytes: Self.stream[...])]).owners == Self.owners)
    }

    @Test func aPacketCutByASubRangeWaitsForTheNextSubRange() {
        for cut in [188 * 3 + 100, 188 * 5 + 1, Self.stream.count - 187] {
            let first = ByteRange(offset: 0, length: cut), second = ByteRange(offset: cut, length: Self.stream.count - cut)
            let joined = Self.read([Piece(uri: "all.ts", sequence: 1, range: first, bytes: Self.stream[..<cut]),
                                    Piece(uri: "all.ts", sequence: 2, range: second, bytes: Self.stream[cut...])])
            #expect(joined.owners == Self.owners, "cut at \(cut)")
            #expect(joined.failures.isEmpty, "cut at \(cut): \(joined.failures)")
            // The same halves as two resources: the cut packet's rest never comes, and that is said.
            let apart = Self.read([Piece(uri: "a.ts", sequence: 1, range: first, bytes: Self.stream[..<cut]),
                                   Piece(uri: "b.ts", sequence: 2, range: second, bytes: Self.stream[cut...])])
            #expect(!apart.failures.isEmpty || apart.owners != Self.owners, "cut at \(cut)")
        }
    }

    /// A retry reads a segment again from its start, from a copy taken after `begin`.
    @Test func aSegmentReadAgainFromItsStartGivesItsTagsOnce() {
        let cut = 188 * 4
        var extractor = SegmentedExtractor(source: "p.m3u8")
        var owners: [String] = []
        let collect = { (event: MediaEvent) in
            if case .tag(let timed) = event {
                owners += timed.tag.frames.compactMap { if case .priv(let owner, _) = $0.content { owner } else { nil } }
            }
        }
        extractor.begin(TagOrigin(source: "p.m3u8", segment: TagOrigin.Segment(uri: "a.ts", mediaSequence: 1)), range: nil,
                        initSegment: nil, emit: collect)
        Array(Self.stream[..<cut]).withUnsafeBufferPointer { extractor.feed($0, emit: collect) }
        _ = extractor.end(keepingCut: false, emit: collect)
        extractor.begin(TagOrigin(source: "p.m3u8", segment: TagOrigin.Segment(uri: "b.ts", mediaSequence: 2)), range: nil,
                        initSegment: nil, emit: collect)
        let saved = extractor
        var dropped: [MediaEvent] = []
        Array(Self.stream[cut..<(cut + 400)]).withUnsafeBufferPointer { extractor.feed($0) { dropped.append($0) } }
        extractor = saved
        Array(Self.stream[cut...]).withUnsafeBufferPointer { extractor.feed($0, emit: collect) }
        _ = extractor.end(keepingCut: false, emit: collect)
        extractor.finish(emit: collect)
        #expect(owners == Self.owners)
    }
}
