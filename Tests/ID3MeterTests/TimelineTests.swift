import Foundation
import Testing
@testable import ID3MeterCore
import SampleGenerator

/// `TimelineRecorder`: where tags, gaps, breaks and tagless segments land on the axis, and what
/// it keeps of a dense or endless source.
@Suite("Tag timelines")
struct TimelineTests {
    /// Tags as the generator writes them (a Nielsen PRIV each), read back by the ID3 parser.
    struct Tags {
        var factory = NielsenTagFactory(seed: 5)

        mutating func tag(pts: Int64, placeholder: Bool = false, segment: TagOrigin.Segment? = nil) throws -> MediaEvent {
            let owner = factory.owner(secondsIntoDay: Int(pts / 90_000) % 86_400, placeholder: placeholder)
            let bytes = ID3TagSpec(frames: [.priv(owner: owner, data: [0x41])], extraFlags: 0x20).bytes()
            let tag = try ID3TagParser.parse(bytes, at: 0).get()
            return .tag(TimedTag(tag: tag, pts: pts, origin: TagOrigin(source: "test", segment: segment)))
        }
    }

    @Test func tagsSitByTheirPTSAndGapsAndBreaksAreWhereTheStreamHasThem() throws {
        var tags = Tags()
        var recorder = TimelineRecorder(details: .latest(100))
        // 0, 2 (short gap), 16 (long gap), then the PTS go back: a break, placed without a clock at the same t.
        for seconds in [0.0, 2, 16, 3, 13] {
            recorder.add(try tags.tag(pts: 900_000 + Int64(seconds * 90_000)))
        }
        let timeline = recorder.timeline
        #expect(timeline.marks.map(\.t) == [0, 2, 16, 16, 26])
        #expect(timeline.spans.map { [$0.from, $0.to, $0.seconds] } == [[0, 2, 2], [2, 16, 14]])
        #expect(timeline.spans.map(\.kind) == [.shortGap, .longGap])
        #expect(timeline.breaks.map(\.t) == [16] && timeline.breaks.first?.detail == "PTS jumps -13.000 s")
        #expect(timeline.end == 26 && timeline.tags == 5 && timeline.bins.isEmpty && timeline.start == nil)
    }

    @Test func aBreakStepsByTheWallClockWhenBothSidesHaveIt() throws {
        var tags = Tags()
        var recorder = TimelineRecorder(details: .latest(0))
        let noon = Date(timeIntervalSince1970: 1_800_000_000)
        recorder.add(try tags.tag(pts: 900_000), date: noon)
        recorder.add(try tags.tag(pts: 90_000), date: noon.addingTimeInterval(30))
        let timeline = recorder.timeline
        #expect(timeline.marks.map(\.t) == [0, 30])
        #expect(timeline.start == noon)
        #expect(timeline.withoutDetails == 2)
    }

    @Test func aSegmentWithoutATagIsPlacedByItsFirstPTS() throws {
        var tags = Tags()
        var recorder = TimelineRecorder(details: .latest(10))
        func segment(_ index: Int) -> TagOrigin.Segment {
            TagOrigin.Segment(uri: "seg\(index).ts", mediaSequence: index, startPTS: 900_000 + Int64(index) * 540_000, duration: 6)
        }
        recorder.add(try tags.tag(pts: 900_000 + 90_000, segment: segment(0)))
        recorder.add(.segment(segment(0)))
        recorder.add(.segment(segment(1)))
        recorder.add(.segment(segment(2)))
        recorder.add(try tags.tag(pts: 900_000 + 3 * 540_000 + 90_000, segment: segment(3)))
        let timeline = recorder.timeline
        #expect(timeline.marks.map(\.t) == [1, 19])
        let empty = timeline.spans.filter { $0.kind == .emptySegment }
        #expect(empty.map { [$0.from, $0.to] } == [[6, 12], [12, 18]])
        #expect(empty.map(\.label) == ["seg1.ts", "seg2.ts"])
        #expect(timeline.spans.contains { $0.kind == .longGap && $0.from == 1 && $0.to == 19 })
    }

    @Test func aDenseSourceIsDrawnInBinsThatAddUp() throws {
        var tags = Tags()
        var recorder = TimelineRecorder(details: .budget(DetailBudget(limit: 10)))
        let count = 5_000
        for index in 0..<count {
            recorder.add(try tags.tag(pts: 900_000 + Int64(index) * 90_000, placeholder: index % 100 == 0))
        }
        let timeline = recorder.timeline
        #expect(timeline.tags == count && timeline.marks.isEmpty)
        #expect(timeline.bins.count <= TimelineRecorder.binCount && timeline.bins.count > 900)
        #expect(timeline.bins.map(\.count).reduce(0, +) == count)
        #expect(timeline.bins.map(\.placeholder).reduce(0, +) == count / 100)
        #expect(timeline.bins.first?.firstPTS == 900_000 && timeline.bins.last?.lastPTS == 900_000 + Int64(count - 1) * 90_000)
        // A tag a second is a short gap after every tag: one run, not 4,999 regions.
        #expect(timeline.spans.count == 1 && timeline.spans.first?.count == count - 1)
        #expect(timeline.spans.first.map { [$0.from, $0.to] } == [0, Double(count - 1)])
    }

    @Test func gapsBackToBackAreOneRegionAndOthersStayApart() throws {
        var tags = Tags()
        var recorder = TimelineRecorder(details: .latest(0))
        // Short gaps of 2, 1 and 3 s back to back, a 10 s gap (no finding), a 2 s gap, then 20 s and 14 s gaps.
        for seconds in [0.0, 2, 3, 6, 16, 18, 38, 52] { recorder.add(try tags.tag(pts: Int64(seconds * 90_000))) }
        let spans = recorder.timeline.spans
        #expect(spans.map(\.kind) == [.shortGap, .shortGap, .longGap])
        #expect(spans.map { [$0.from, $0.to, $0.seconds, Double($0.count)] } == [[0, 6, 1, 3], [16, 18, 2, 1], [18, 52, 20, 2]])
    }

    @Test func flaggedTagsKeepTheirDetailsWhenValidOnesHaveSpentTheBudget() throws {
        var tags = Tags()
        var recorder = TimelineRecorder(details: .budget(DetailBudget(limit: 1)))
        for (index, placeholder) in [false, false, true, false, true].enumerated() {
            recorder.add(try tags.tag(pts: Int64(index) * 900_000, placeholder: placeholder))
        }
        #expect(recorder.timeline.marks.map { $0.detail != nil } == [true, false, true, false, false])
    }

    @Test func theDetailBudgetIsSharedBySources() throws {
        var tags = Tags()
        let budget = DetailBudget(limit: 3)
        var first = TimelineRecorder(details: .budget(budget)), second = TimelineRecorder(details: .budget(budget))
        for index in 0..<2 { first.add(try tags.tag(pts: Int64(index) * 900_000)) }
        for index in 0..<2 { second.add(try tags.tag(pts: Int64(index) * 900_000)) }
        #expect(first.timeline.marks.map { $0.detail != nil } == [true, true])
        #expect(second.timeline.marks.map { $0.detail != nil } == [true, false])
        #expect(second.timeline.withoutDetails == 1)
    }

    @Test func aLiveWindowKeepsTheLastHourAndTheLatestDetails() throws {
        var tags = Tags()
        var recorder = TimelineRecorder(details: .latest(5), window: 3_600)
        // Two hours, a tag every 10 s.
        for index in 0...720 { recorder.add(try tags.tag(pts: Int64(index) * 900_000)) }
        let timeline = recorder.timeline
        #expect(timeline.tags == 361, "7,200 s minus the window, every 10 s, both ends")
        #expect(timeline.marks.first?.t == 0 && timeline.marks.last?.t == 3_600 && timeline.end == 3_600)
        #expect(timeline.marks.first?.pts.map { Int($0) } == 360 * 900_000)
        #expect(timeline.marks.suffix(5).allSatisfy { $0.detail != nil } && timeline.withoutDetails == 356)
    }

    /// A live channel keeps an hour of marks, 3,600 at a tag a second: each in 16 bytes (a
    /// `TagTimeline.Mark` is 40), its kind and PTS as they came, whatever the PTS.
    @Test func aMarkIsKeptInSixteenBytesWithItsKindAndPTS() {
        #expect(MemoryLayout<StoredMark>.stride == 16 && MemoryLayout<TagTimeline.Mark>.stride == 40)
        let values: [Int64?] = [nil, 0, 1, (1 << 33) - 1, -1, -(1 << 60), (1 << 60) - 1]
        for kind in TagTimeline.Kind.allCases {
            for pts in values {
                let mark = StoredMark(t: 12.5, kind: kind, pts: pts)
                #expect(mark.kind == kind && mark.pts == pts && mark.t == 12.5, "\(kind) \(String(describing: pts))")
            }
        }
        // Past 2^60 ticks (400,000 years), only a hostile stream's: kept at the nearest end.
        #expect(StoredMark(t: 0, kind: .valid, pts: .max).pts == (1 << 60) - 1)
        #expect(StoredMark(t: 0, kind: .invalid, pts: .min).pts == -(1 << 60))
    }

    @Test func aFloodOfTagsAndSegmentsIsBoundedInALiveWindow() throws {
        var tags = Tags()
        var recorder = TimelineRecorder(details: .latest(5), window: 3_600)
        // A tag and a tagless segment every millisecond: the hour would hold 3.6 million of each.
        let count = 2 * TimelineRecorder.windowedLimit + 500
        for index in 0..<count {
            recorder.add(try tags.tag(pts: Int64(index) * 90))
            recorder.add(.segment(TagOrigin.Segment(uri: "s\(index)", mediaSequence: index, startPTS: Int64(index) * 90 + 45, duration: 0.0004)))
            recorder.add(.segment(TagOrigin.Segment(uri: "e\(index)", mediaSequence: index, startPTS: Int64(index) * 90 + 60, duration: 0.0002)))
        }
        let timeline = recorder.timeline
        let limit = TimelineRecorder.windowedLimit
        #expect(timeline.tags >= limit && timeline.tags <= limit + limit / 10)
        #expect(timeline.bins.map(\.lastPTS).last == Int64(count - 1) * 90, "the newest are kept")
        // The oldest tagless segments went with the oldest tags (without the bound the first starts at 0.7 ms).
        #expect((timeline.spans.first?.from ?? 0) >= Double(count - limit - limit / 10) / 1_000 - 0.001)
    }

    @Test func theJSONIsCompactAndRoundedToTheMillisecond() throws {
        var tags = Tags()
        var recorder = TimelineRecorder(details: .latest(0))
        recorder.add(try tags.tag(pts: 900_000))
        recorder.add(try tags.tag(pts: 900_000 + 100))
        let json = String(decoding: try JSONEncoder().encode(recorder.timeline), as: UTF8.self)
        #expect(json.contains(#""marks":[[0,"v",900000],[0.001,"v",900100]]"#), "\(json)")
        #expect(json.contains(#""spans":[[0,0.001,0.001,"short",1,null]]"#), "\(json)")
    }
}
