import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// A break whose `START-DATE` falls inside a primary segment, without `X-SNAP`: players leave
/// the primary at the date itself. hls.js, tests/unit/controller/interstitials-controller.ts,
/// "default values" (START-DATE 4 s into a 6 s segment, DURATION 30: the primary's schedule item
/// ends at 4 s and the break's starts there, to 34 s); Media3 places such a break as an ad cue at
/// its exact date. The primary then resumes at the break's start plus its resumption offset,
/// mid-segment too.
///
/// The primary is InterstitialTests' fMP4 sample (6.006 s segments; its writer's tags at 0.5, 2,
/// 5, 6.5, 8, 11, 12.5, 14 and 17 s), the break its two 6.006 s ad segments, at 7.5 s: 1.494 s
/// into the second segment, between its tags at 6.5 and 8 s.
@Suite("Conformance: a START-DATE inside a segment", .timeLimit(.minutes(1)))
struct InterstitialInsideASegmentTests {
    static let breakAt = 7.5
    static let adSeconds = 12.012

    static func range(resumeOffset: Double) -> String {
        #"ID="inside",CLASS="com.apple.hls.interstitial",START-DATE="\#(InterstitialTests.date(after: breakAt))",X-ASSET-URI="../ad/both.m3u8",X-RESUME-OFFSET=\#(resumeOffset)"#
    }

    /// The primary's Nielsen tags, with their seconds from the primary's start (the fMP4
    /// sample's PTS start at 0 with its first segment).
    static func primary() throws -> [(tag: InterstitialTests.Tag, seconds: Double)] {
        try InterstitialTests.primaryTags(["seg0.m4s", "seg1.m4s", "seg2.m4s"]).map { ($0, PTS.seconds($0.pts ?? 0)) }
    }

    /// Scans `scenario`, then plays its events on a frame clock that never waits: the tags in the
    /// order read, and the engine's `sendID3` calls with their seconds on the clock.
    static func run(_ scenario: String, resumeOffset: Double) async throws
        -> (found: [InterstitialTests.Tag], segments: [TagOrigin.Segment], sends: [(payload: String, at: Double)]) {
        let server = try InterstitialTests.server(more: [scenario: [range(resumeOffset: resumeOffset)]])
        defer { server.stop() }
        let events = await Samples.scan(server.url("primary/\(scenario).m3u8"))
        #expect(events.failures.isEmpty, "\(events.failures)")
        let clock = InstantClock()
        let engine = ClockedEngine(clock: clock)
        await Feeder(clock: clock).events(FeederTests.source(events), engine: engine).deliveries()
        let segments = events.compactMap { event -> TagOrigin.Segment? in
            if case .segment(let segment) = event, segment.interstitial == nil { segment } else { nil }
        }
        return (InterstitialTests.found(events), segments, engine.sends)
    }

    /// `X-RESUME-OFFSET=0`: the break is inserted at 7.5 s, and the primary goes on from there.
    @Test func theBreakPlaysAtItsDateAndThePrimaryGoesOnFromIt() async throws {
        let (found, segments, sends) = try await Self.run("inserted", resumeOffset: 0)
        let primary = try Self.primary()
        let ads = try InterstitialTests.adTags(["seg0.ts", "seg1.ts"], in: "inside")
        let before = primary.filter { $0.seconds < Self.breakAt }, after = primary.filter { $0.seconds >= Self.breakAt }
        #expect(before.count == 4 && after.count == 5, "the writer's tags either side of 7.5 s")
        #expect(found == before.map(\.tag) + ads + after.map(\.tag), "the second segment's tags either side of the break")

        // The segment holding the date is played in two parts, counted as one segment.
        let parts = segments.filter { $0.mediaSequence == 1 }
        let offsets = parts.map { $0.part?.offset ?? -1 }, durations = parts.map { $0.duration ?? -1 }
        #expect(offsets.matches([0, 1.494], within: 1e-6), "\(offsets)")
        #expect(durations.matches([1.494, 4.512], within: 1e-6), "\(durations)")
        #expect(parts.map { $0.part?.isLast } == [false, true])

        // On the frame clock: the primary before the break at its own time, the break from
        // 7.5 s, the primary after it its distance from 7.5 s past the break's 12.012 s.
        let frame = 0.05
        let payloads = sends.map(\.payload)
        #expect(payloads == found.compactMap(\.payload))
        for (tag, seconds) in before {
            let at = try #require(sends.first { $0.payload == tag.payload }?.at)
            #expect(abs(at - seconds) <= frame + 1e-9, "\(tag) at \(at), not \(seconds)")
        }
        for ad in ads {
            let at = try #require(sends.first { $0.payload == ad.payload }?.at)
            #expect(at >= Self.breakAt - 1e-9 && at < Self.breakAt + Self.adSeconds, "\(ad) at \(at)")
        }
        for (tag, seconds) in after {
            let at = try #require(sends.first { $0.payload == tag.payload }?.at)
            let due = seconds + Self.adSeconds
            // Within `afterTheBreak`: the clock plays the ad by its PTS, not its EXTINF.
            #expect(abs(at - due) <= Self.afterTheBreak, "\(tag) at \(at), not \(due)")
        }
    }

    /// How far a tag after the break may be from where the EXTINFs put it: the ad sample's
    /// segments overlap in PTS (its second segment's audio starts at 7.21 s, 0.2 s before the
    /// first's 1.41 s plus 6.006 s), and a frame clock plays media by PTS; then a frame. Far
    /// below the errors this guards: the break after the segment (12 s), the primary resumed
    /// from the segment's start (1.5 or 4.5 s).
    static let afterTheBreak = 0.25

    /// `X-RESUME-OFFSET=3`: the break replaces 7.5 to 10.5 s of the primary; the tag at 8 s is
    /// never played, and the primary resumes at 10.5 s, mid-segment.
    @Test func theBreakReplacesFromItsDateAndThePrimaryResumesMidSegment() async throws {
        let (found, segments, sends) = try await Self.run("replacing", resumeOffset: 3)
        let primary = try Self.primary()
        let ads = try InterstitialTests.adTags(["seg0.ts", "seg1.ts"], in: "inside")
        let before = primary.filter { $0.seconds < Self.breakAt }, after = primary.filter { $0.seconds >= Self.breakAt + 3 }
        #expect(primary.count - before.count - after.count == 1, "one tag, at 8 s, in the replaced stretch")
        #expect(found == before.map(\.tag) + ads + after.map(\.tag))

        let parts = segments.filter { $0.mediaSequence == 1 }
        let offsets = parts.map { $0.part?.offset ?? -1 }, durations = parts.map { $0.duration ?? -1 }
        #expect(offsets.matches([0, 4.494], within: 1e-6), "\(offsets)")
        #expect(durations.matches([1.494, 1.512], within: 1e-6), "\(durations)")

        for (tag, seconds) in after {
            let at = try #require(sends.first { $0.payload == tag.payload }?.at)
            // Resumed at 10.5 s of the primary, when the break ends at 7.5 + 12.012 s.
            let due = Self.breakAt + Self.adSeconds + (seconds - (Self.breakAt + 3))
            #expect(abs(at - due) <= Self.afterTheBreak, "\(tag) at \(at), not \(due)")
        }
    }
}
