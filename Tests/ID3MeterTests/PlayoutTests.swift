import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// The frame clock on virtual time: every expected time here is worked out by hand from the
/// segment layout, never read back from the code.
@Suite("Frame clock")
struct PlayoutTests {
    static let fps = 25.0
    static let frame = 1 / fps

    /// A segment starting at `startPTS`, with a tag at each offset (seconds from the start).
    static func segment(sequence: Int, startPTS: Int64, duration: Double = 6, tagOffsets: [Double],
                        discontinuity: Int = 0) -> MediaChunk {
        let segment = TagOrigin.Segment(uri: "seg\(sequence).ts", mediaSequence: sequence, discontinuitySequence: discontinuity,
                                    startPTS: startPTS, duration: duration)
        let origin = TagOrigin(source: "test.m3u8", segment: segment)
        let tags = tagOffsets.enumerated().map { index, offset in
            TimedTag(tag: ID3Tag(version: .v2_4, flags: 0, frames: [
                ID3Frame(id: "PRIV", size: 0, content: .priv(owner: "www.nielsen.com/\(sequence)/\(index)", data: []))
            ], byteCount: 0, notes: []),
                     pts: PTS.asCarried(startPTS + Int64((offset * 90_000).rounded())), origin: origin)
        }
        return MediaChunk(segment: segment, duration: duration, tags: tags)
    }

    /// Steps `playout` frame by frame from `from` to `to` (wall seconds) and records when each tag came due.
    static func run(_ playout: inout Playout, from: Double = 0, to: Double) -> [(String, Double)] {
        var deliveries: [(String, Double)] = []
        var now = from
        while now <= to {
            deliveries += playout.takeDue(at: now).map { ($0.tag.nielsenTags[0].payload, now) }
            now += frame / 4
        }
        return deliveries
    }

    @Test func tagsAreSpreadOverTheSegmentNotDumpedAtOnce() {
        var playout = Playout(frameRate: Self.fps)
        playout.append(Self.segment(sequence: 0, startPTS: 900_000, tagOffsets: [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]), at: 0)
        let deliveries = Self.run(&playout, to: 7)
        #expect(deliveries.map(\.0) == (0..<6).map { "www.nielsen.com/0/\($0)" })
        for (index, (_, time)) in deliveries.enumerated() {
            let due = 0.5 + Double(index)
            #expect(time >= due - 1e-9 && time < due + Self.frame, "tag \(index) at \(time), due \(due)")
        }
    }

    @Test func nextDueTimeIsTheFrameThatReachesTheTag() {
        var playout = Playout(frameRate: Self.fps)
        playout.append(Self.segment(sequence: 0, startPTS: 0, tagOffsets: [1.01]), at: 10)
        // 1.01 s is past frame 25 (1.00 s): the playhead reaches it at frame 26, 1.04 s after start.
        #expect(abs(playout.nextDueTime()! - 11.04) < 1e-9)
        #expect(playout.takeDue(at: 11.03).isEmpty)
        #expect(playout.takeDue(at: 11.04).count == 1)
    }

    @Test func ptsWrapIsCrossedWithoutAGapOrABurst() {
        var playout = Playout(frameRate: Self.fps)
        let nearWrap = PTS.wrap - 2 * 90_000  // 2 s before the 33-bit wrap
        playout.append(Self.segment(sequence: 0, startPTS: nearWrap, tagOffsets: [1, 3, 5]), at: 0)
        playout.append(Self.segment(sequence: 1, startPTS: PTS.asCarried(nearWrap + 6 * 90_000), tagOffsets: [1, 3]), at: 0)
        let times = Self.run(&playout, to: 12).map(\.1)
        #expect(times.matches([1.0, 3, 5, 7, 9], within: Self.frame), "\(times)")
    }

    @Test func aDiscontinuityReanchorsWhereTheLastSegmentEnded() {
        var playout = Playout(frameRate: Self.fps)
        playout.append(Self.segment(sequence: 0, startPTS: 5_000_000, tagOffsets: [2, 4]), at: 0)
        // New encoder: PTS jump back, discontinuity sequence 1; media continues at 6 s.
        playout.append(Self.segment(sequence: 1, startPTS: 90_000, tagOffsets: [1, 3], discontinuity: 1), at: 0)
        // And a PTS jump that no discontinuity tag announced is treated the same way.
        playout.append(Self.segment(sequence: 2, startPTS: 70_000_000, tagOffsets: [1], discontinuity: 1), at: 0)
        let times = Self.run(&playout, to: 20).map(\.1)
        #expect(times.count == 5)
        #expect(times.matches([2.0, 4, 7, 9, 13], within: Self.frame), "\(times)")
    }

    @Test func aStallFreezesThePlayheadAndResumesWithoutABurst() {
        var playout = Playout(frameRate: Self.fps)
        playout.append(Self.segment(sequence: 0, startPTS: 900_000, duration: 2, tagOffsets: [0.5, 1.5]), at: 0)
        var deliveries = Self.run(&playout, to: 5)
        #expect(playout.isStalled(at: 5))
        #expect(playout.playhead(at: 5) == 2)
        // The next segment arrives 3 s late; its tags at 2.5 and 3.5 s of media play 0.5 and 1.5 s after it arrives.
        let stalled = playout.append(Self.segment(sequence: 1, startPTS: 900_000 + 2 * 90_000, duration: 2, tagOffsets: [0.5, 1.5]), at: 5)
        #expect(abs(stalled - 3) < 1e-9, "the buffer ran dry at 2 s and media came at 5 s")
        #expect(!playout.isStalled(at: 5))
        deliveries += Self.run(&playout, from: 5, to: 9)
        let times = deliveries.map(\.1)
        #expect(times.matches([0.5, 1.5, 5.5, 6.5], within: Self.frame), "\(times)")
    }

    @Test func speedScalesWallTime() {
        var playout = Playout(frameRate: Self.fps, speed: 4)
        playout.append(Self.segment(sequence: 0, startPTS: 0, tagOffsets: [2, 4]), at: 0)
        let times = Self.run(&playout, to: 2).map(\.1)
        #expect(times.matches([0.5, 1.0], within: Self.frame / 4), "\(times)")
    }

    @Test func outOfOrderTagsPlayInPositionOrder() {
        var playout = Playout(frameRate: Self.fps)
        playout.append(Self.segment(sequence: 0, startPTS: 0, tagOffsets: [3, 1, 2]), at: 0)
        #expect(Self.run(&playout, to: 4).map(\.0) == ["www.nielsen.com/0/1", "www.nielsen.com/0/2", "www.nielsen.com/0/0"])
    }

    /// Issue 55: segments given up on leave a hole in the buffer; playback stalled at it resumes
    /// at the next media when it comes (hls.js's gap controller skips such a hole), so its tags
    /// are delivered as they arrive, not the hole's length later.
    @Test func aHoleOfSegmentsNeverBufferedIsSkippedWhenPlaybackStallsAtIt() {
        var playout = Playout(frameRate: Self.fps)
        playout.append(Self.segment(sequence: 0, startPTS: 900_000, duration: 2, tagOffsets: [0.5, 1.5]), at: 0)
        var deliveries = Self.run(&playout, to: 30)
        #expect(playout.isStalled(at: 30))
        // Segments 1 to 14 (28 s) never came; segment 15 arrives at 30 s.
        playout.append(Self.segment(sequence: 15, startPTS: 900_000 + 30 * 90_000, duration: 2, tagOffsets: [0.5, 1.5]), at: 30)
        deliveries += Self.run(&playout, from: 30, to: 40)
        #expect(deliveries.map(\.1).matches([0.5, 1.5, 30.5, 31.5], within: Self.frame), "\(deliveries.map(\.1))")
    }
}
