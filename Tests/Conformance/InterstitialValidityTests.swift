import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// Which `EXT-X-DATERANGE`s are interstitials a player plays (docs/CONFORMANCE.md,
/// "Interstitials a player ignores").
///
/// hls.js, tests/unit/loader/date-range.ts, "parses the CUE attribute PRE, POST, and ONCE
/// Trigger Identifiers": a `CUE` of both `PRE` and `POST` makes the date range invalid
/// (`DateRange.isValid`), and an invalid one schedules nothing; one of the interstitial class
/// needs `X-ASSET-URI` or `X-ASSET-LIST`. Given both, hls.js loads the URI
/// (src/controller/interstitials-controller.ts, `preloadAssets`).
@Suite("Conformance: interstitials a player ignores", .timeLimit(.minutes(1)))
struct InterstitialValidityTests {
    static let ranges = [
        // Invalid: before and after the primary at once; its asset is missing.
        #"ID="both-cues",CLASS="com.apple.hls.interstitial",START-DATE="\#(InterstitialTests.date(after: 0))",CUE="PRE,POST",X-ASSET-URI="../ad/missing.m3u8""#,
        // Invalid: no START-DATE.
        #"ID="no-start",CLASS="com.apple.hls.interstitial",X-ASSET-URI="../ad/missing.m3u8""#,
        // Both assets: the URI is played, the list never asked.
        #"ID="break-1",CLASS="com.apple.hls.interstitial",START-DATE="\#(InterstitialTests.date(after: 6.006))",X-ASSET-URI="../ad/both.m3u8",X-ASSET-LIST="../ad/missing.json",X-RESUME-OFFSET=0"#,
    ]

    @Test func invalidDateRangesScheduleNothingAndBothAssetsPlayTheURI() async throws {
        guard case .media(let playlist) = try PlaylistParser.parse(InterstitialTests.primaryPlaylist(Self.ranges), location: "https://h/primary/x.m3u8") else {
            Issue.record("a media playlist")
            return
        }
        #expect(playlist.interstitials.map(\.id) == ["break-1"])
        #expect(playlist.interstitials.first?.assetURI == "https://h/ad/both.m3u8" && playlist.interstitials.first?.assetList == nil)

        let server = try InterstitialTests.server(more: ["invalid": Self.ranges])
        defer { server.stop() }
        let events = await Samples.scan(server.url("primary/invalid.m3u8"))
        #expect(events.failures.isEmpty, "\(events.failures)")
        #expect(InterstitialTests.found(events) == (try InterstitialTests.expected("insert")), "the insert scenario's tags, as if the others were not there")
        #expect(!server.requests.contains { $0.path.hasPrefix("ad/missing") })
    }
}

/// hls.js, tests/unit/controller/interstitials-controller.ts, "X-RESUME-OFFSET values of
/// interstitials scheduled at the same time are cumulative": two breaks at 0 s (DURATION 5 and
/// 25, no offset) resume the primary at 5 and then 30 s; three at 31 s (offsets 0, none with
/// DURATION 3, 4) at 31, 34 and 38 s. The primary in between is replaced: its tags never play.
@Suite("Conformance: breaks at one START-DATE")
struct InterstitialsAtOneStartTests {
    @Test func theirResumeOffsetsAddUp() throws {
        func range(_ id: Int, at seconds: Int, duration: Int, offset: Int?) -> String {
            #"#EXT-X-DATERANGE:ID="\#(id)",CLASS="com.apple.hls.interstitial",START-DATE="2020-01-01T11:00:\#(String(format: "%02d", seconds)).000Z",DURATION=\#(duration),"#
                + (offset.map { "X-RESUME-OFFSET=\($0)," } ?? "") + #"X-ASSET-URI="https://example.com/index\#(id).m3u8""#
        }
        let text = (["#EXTM3U", "#EXT-X-TARGETDURATION:10", "#EXT-X-VERSION:6", "#EXT-X-PROGRAM-DATE-TIME:2020-01-01T11:00:00.000Z",
                     range(0, at: 0, duration: 5, offset: nil), range(1, at: 0, duration: 25, offset: nil)]
            + (1...3).flatMap { ["#EXTINF:10,", "fileSequence\($0).ts"] }
            + [range(2, at: 31, duration: 3, offset: 0), range(3, at: 31, duration: 3, offset: nil), range(4, at: 31, duration: 3, offset: 4),
               "#EXTINF:10,", "fileSequence4.ts", "#EXT-X-ENDLIST"]).joined(separator: "\n")
        guard case .media(let playlist) = try PlaylistParser.parse(text, location: "https://example.com/p.m3u8") else {
            Issue.record("a media playlist")
            return
        }
        let start = try #require(playlist.segments.first?.programDateTime)
        var schedule = InterstitialSchedule()
        schedule.learn(playlist.interstitials)
        let first = schedule.due(beforeSegmentAt: start, joined: false)
        #expect(first.map(\.id) == ["0", "1"], "in the playlist's order")
        // Played as long as their DURATION says (no X-RESUME-OFFSET: the time they played).
        for interstitial in first { schedule.played(interstitial, for: interstitial.duration ?? 0) }
        let second10 = schedule.replacesSegment(at: start.addingTimeInterval(10), duration: 10)
        let second20 = schedule.replacesSegment(at: start.addingTimeInterval(20), duration: 10)
        #expect(second10 && second20, "resumed at 30 s, not 5 s")
        #expect(schedule.isReplaced(start.addingTimeInterval(29.5)) && !schedule.isReplaced(start.addingTimeInterval(30.5)))
        let second = schedule.due(beforeSegmentAt: start.addingTimeInterval(31), joined: false)
        #expect(second.map(\.id) == ["2", "3", "4"])
        for interstitial in second { schedule.played(interstitial, for: interstitial.duration ?? 0) }
        #expect(schedule.isReplaced(start.addingTimeInterval(37.5)) && !schedule.isReplaced(start.addingTimeInterval(38.5)),
                "resumed at 38 s: 31 + 0 + 3 + 4")
        #expect(!schedule.isReplaced(start.addingTimeInterval(30.5)), "the primary plays between the two")
    }
}

/// The scan the issue saw go wrong: two inserted breaks at one START-DATE, then a later one;
/// each is played, in the playlist's order, and the primary between them.
@Suite("Conformance: breaks at one START-DATE, then more", .timeLimit(.minutes(1)))
struct BreaksInARowTests {
    @Test func everyBreakIsFetchedAndPlayedInOrder() async throws {
        let ranges = [
            #"ID="a",CLASS="com.apple.hls.interstitial",START-DATE="\#(InterstitialTests.date(after: 6.006))",X-ASSET-URI="../ad/both.m3u8",X-RESUME-OFFSET=0"#,
            #"ID="b",CLASS="com.apple.hls.interstitial",START-DATE="\#(InterstitialTests.date(after: 6.006))",X-ASSET-URI="../ad/one.m3u8",X-RESUME-OFFSET=0"#,
            #"ID="c",CLASS="com.apple.hls.interstitial",START-DATE="\#(InterstitialTests.date(after: 12.012))",X-ASSET-URI="../ad/two.m3u8",X-RESUME-OFFSET=0"#,
        ]
        let server = try InterstitialTests.server(more: ["row": ranges])
        defer { server.stop() }
        let events = await Samples.scan(server.url("primary/row.m3u8"))
        #expect(events.failures.isEmpty, "\(events.failures)")
        let expected = try InterstitialTests.primaryTags(["seg0.m4s"]) + InterstitialTests.adTags(["seg0.ts", "seg1.ts"], in: "a")
            + InterstitialTests.adTags(["seg0.ts"], in: "b") + InterstitialTests.primaryTags(["seg1.m4s"])
            + InterstitialTests.adTags(["seg1.ts"], in: "c") + InterstitialTests.primaryTags(["seg2.m4s"])
        #expect(InterstitialTests.found(events) == expected)
    }
}

/// `X-SNAP`, as Apple's HLS Interstitials define it and hls.js schedules it:
/// tests/unit/controller/interstitials-controller.ts, "should parse Interstitial Events from
/// LevelDetails and produce a schedule" (START-DATE 4 s into a 6 s segment with
/// `X-SNAP="OUT,IN"`: the break starts at 6 s, the boundary nearest its date) and "resumes at
/// segment boundary nearest to live-edge with X-SNAP". `OUT` leaves the primary at the segment
/// boundary nearest the START-DATE, `IN` rejoins it at the one nearest the resumption point: a
/// segment is played whole or not at all.
@Suite("Conformance: X-SNAP")
struct InterstitialSnapTests {
    static func schedule(_ attributes: String) throws -> (InterstitialSchedule, Interstitial, Date) {
        let text = (["#EXTM3U", "#EXT-X-TARGETDURATION:6", "#EXT-X-VERSION:6", "#EXT-X-PROGRAM-DATE-TIME:2020-01-01T11:00:00.000Z",
                     #"#EXT-X-DATERANGE:ID="0",CLASS="com.apple.hls.interstitial",X-ASSET-URI="https://example.com/ad1.m3u8","# + attributes]
            + (0..<8).flatMap { ["#EXTINF:6,", "fileSequence\($0).ts"] } + ["#EXT-X-ENDLIST"]).joined(separator: "\n")
        guard case .media(let playlist) = try PlaylistParser.parse(text, location: "https://example.com/p.m3u8") else { throw TestFailure("a media playlist") }
        var schedule = InterstitialSchedule()
        schedule.learn(playlist.interstitials)
        return (schedule, try #require(playlist.interstitials.first), try #require(playlist.segments.first?.programDateTime))
    }

    @Test func theBreakLeavesAndRejoinsThePrimaryAtTheNearestBoundaries() throws {
        var (schedule, interstitial, start) = try Self.schedule(#"START-DATE="2020-01-01T11:00:04.000Z",DURATION=30,X-SNAP="OUT,IN""#)
        #expect(interstitial.snap == [.out, .in])
        func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }
        #expect(schedule.due(beforeSegmentAt: at(0), duration: 6, joined: false).isEmpty, "4 s is nearer 6 s than 0 s")
        #expect(schedule.due(beforeSegmentAt: at(6), duration: 6, joined: false).map(\.id) == ["0"])
        schedule.played(interstitial, for: 30)
        #expect(!schedule.isReplaced(at(5)), "the primary plays to the boundary it leaves at")
        for segment in 1..<5 {
            let replaced = schedule.replacesSegment(at: at(Double(segment) * 6), duration: 6)
            #expect(replaced, "segment \(segment)")
        }
        let holdingTheResumption = schedule.replacesSegment(at: at(30), duration: 6)
        #expect(holdingTheResumption && schedule.isReplaced(at(35)),
                "the resumption point, 34 s, is nearer 36 s than 30 s: the segment 30–36 s is not played")
        let after = schedule.replacesSegment(at: at(36), duration: 6)
        #expect(!after && !schedule.isReplaced(at(36.5)))

        // Without X-SNAP: left at its date, rejoined mid-segment.
        var (plain, break2, _) = try Self.schedule(#"START-DATE="2020-01-01T11:00:04.000Z",DURATION=30"#)
        #expect(plain.due(beforeSegmentAt: at(0), duration: 6, joined: false).isEmpty)
        #expect(plain.due(beforeSegmentAt: at(6), duration: 6, joined: false).map(\.id) == ["0"])
        plain.played(break2, for: 30)
        let plainHolding = plain.replacesSegment(at: at(30), duration: 6)
        #expect(plain.isReplaced(at(5)) && !plainHolding && !plain.isReplaced(at(35)))

        // OUT snaps back too: a START-DATE 1 s into a segment leaves the primary at that segment's start.
        var (early, _, _) = try Self.schedule(#"START-DATE="2020-01-01T11:00:07.000Z",DURATION=6,X-SNAP="OUT""#)
        #expect(early.due(beforeSegmentAt: at(0), duration: 6, joined: false).isEmpty)
        #expect(early.due(beforeSegmentAt: at(6), duration: 6, joined: false).map(\.id) == ["0"])
    }
}

/// hls.js, tests/unit/controller/interstitials-controller.ts, "request asset-list with
/// _HLS_start_offset when joining" (a mid-roll at 20 s, DURATION 30, joined at 30 s: played from
/// 10 s in) and "resumes at segment boundary nearest to live-edge with X-SNAP" (mid-rolls that
/// ended before the join are kept in the schedule and not played). A join inside a break's
/// stretch of the primary plays the rest of it; its tags are the audience's.
@Suite("Conformance: a live join inside a break", .timeLimit(.minutes(1)))
struct JoinInsideABreakTests {
    @Test func theScheduleStartsTheBreakPartWayIn() throws {
        var (schedule, _, start) = try InterstitialSnapTests.schedule(#"START-DATE="2020-01-01T11:00:20.000Z",DURATION=30"#)
        let due = schedule.due(beforeSegmentAt: start.addingTimeInterval(30), duration: 6, joined: true)
        #expect(due.map(\.id) == ["0"])
        #expect(schedule.startOffset(of: due[0]) == 10)
        var (over, _, _) = try InterstitialSnapTests.schedule(#"START-DATE="2020-01-01T11:00:00.000Z",DURATION=15"#)
        #expect(over.due(beforeSegmentAt: start.addingTimeInterval(30), duration: 6, joined: true).isEmpty, "over at 15 s, before the join")
    }

    /// hls.js's expected request URLs (the same test, "should include _HLS_start_offset in
    /// midroll asset-list request, following preroll with implicit resumption offset", "requests
    /// upcoming midrolls with expected offset"): the query the playlist gave kept in front.
    @Test func theRequestsNameThePlaybackAndTheOffset() {
        let id = "6f1c"
        #expect(InterstitialRequest.url("https://example.com/mid.json", primaryID: id, startOffset: 10)
            == "https://example.com/mid.json?_HLS_primary_id=6f1c&_HLS_start_offset=10")
        #expect(InterstitialRequest.url("https://example.com/mid-list.json?_HLS_interstitial_id=mid-starts-at-24", primaryID: id, startOffset: 6)
            == "https://example.com/mid-list.json?_HLS_interstitial_id=mid-starts-at-24&_HLS_primary_id=6f1c&_HLS_start_offset=6")
        #expect(InterstitialRequest.url("http://example.com/new-midroll", primaryID: id, startOffset: 7.5)
            == "http://example.com/new-midroll?_HLS_primary_id=6f1c&_HLS_start_offset=7.5")
        #expect(InterstitialRequest.url("https://example.com/midroll.m3u8", primaryID: id) == "https://example.com/midroll.m3u8?_HLS_primary_id=6f1c")
        #expect(InterstitialRequest.url("https://h/a.m3u8?_HLS_primary_id=old#x", primaryID: id, startOffset: 0.0004) == "https://h/a.m3u8?_HLS_primary_id=6f1c#x",
                "an id already there is replaced; an offset under a millisecond is none")
        #expect(InterstitialRequest.url("data:application/json,{}", primaryID: id, startOffset: 3) == "data:application/json,{}")
        #expect(InterstitialRequest.url("file:///etc/passwd", primaryID: id) == "file:///etc/passwd", "refused as listed")
    }

    /// The meter joins a live stream 8.5 s in (its first segment the 6th) inside a break placed
    /// at 4 s that replaces 3 s of the primary: the break's last two seconds are played, then
    /// the primary from 7 s.
    ///
    /// Its requests, as hls.js makes them ("request asset-list with _HLS_start_offset when
    /// joining"): the asset list (when the break has one) with `_HLS_primary_id` and
    /// `_HLS_start_offset` (the seconds into the break: 1), the asset's playlist with
    /// `_HLS_primary_id`, one id for the run.
    @Test(arguments: [false, true])
    func theMeterJoiningInsideABreakPlaysItsRest(fromAnAssetList: Bool) async throws {
        var ad = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 10, segmentCount: 3, startDate: Date(timeIntervalSince1970: 0))
        ad.seed = 78
        let channel = LiveChannel(preroll: 8.5) { date in
            var stream = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 30, segmentCount: 10, startDate: date)
            stream.seed = 6
            stream.breaks = [.init(id: "joined-break", atSegment: 4, assetURI: fromAnAssetList ? "ad/list.json" : "ad/live.m3u8",
                                   isAssetList: fromAnAssetList, resumeOffset: 3)]
            return stream
        }
        let server = try InterstitialTests.liveServer(channel, ad: ad)
        defer { server.stop() }
        let run = try await offThePool { try Command.run(["--format", "jsonl", server.url("master.m3u8")]) }
        #expect(run.status == 0, "\(run.stderr)")
        let stream = try #require(channel.liveStream)
        let primary = (7..<10).flatMap { stream.tags(inSegment: $0) }.map { InterstitialTests.Tag(pts: $0.pts, payload: $0.owner, interstitial: nil) }
        let rest = (1..<3).flatMap { ad.tags(inSegment: $0) }.map { InterstitialTests.Tag(pts: $0.pts, payload: $0.owner, interstitial: "joined-break") }
        #expect(InterstitialTests.recorded(run.stdout) == rest + primary, "\(run.stderr)")

        let asset = server.requests.filter { $0.path == "ad/live.m3u8" }
        let list = server.requests.filter { $0.path == "ad/list.json" }
        #expect(!asset.isEmpty && list.count == (fromAnAssetList ? 1 : 0))
        let ids = Set((asset + list).compactMap { $0.query["_HLS_primary_id"] })
        #expect(ids.count == 1 && ids.first.flatMap(UUID.init(uuidString:)) != nil, "one session id, a UUID: \(ids)")
        #expect(asset.allSatisfy { $0.query["_HLS_primary_id"] != nil && $0.query["_HLS_start_offset"] == nil })
        #expect(list.allSatisfy { $0.query["_HLS_start_offset"] == "1" }, "\(list.map(\.query))")
    }
}

/// A VOD pre-roll without `X-RESUME-OFFSET` replaces the primary's first seconds, its duration:
/// Media3, androidx/media HlsInterstitialsAdsLoaderTest
/// `handleContentTimelineChanged_resumeOffsetSetToZero_contentResumeOffsetUsIsZero` (two
/// pre-rolls, one with `X-RESUME-OFFSET=0` and one without, `X-PLAYOUT-LIMIT=1.0` each: the
/// content resumes 1 s in), and hls.js's source (resumeTime 0 + duration; no test of theirs).
/// On a live join the primary resumes where it joined (hls.js: the live start position).
@Suite("Conformance: a VOD pre-roll's resumption")
struct PreRollResumptionTests {
    @Test func aVODPreRollWithoutOffsetReplacesItsDurationOfThePrimary() throws {
        var (schedule, preRoll, start) = try InterstitialSnapTests.schedule(#"START-DATE="2020-01-01T11:00:00.000Z",CUE="PRE",DURATION=6"#)
        #expect(schedule.due(beforeSegmentAt: start, duration: 6, joined: false).map(\.id) == ["0"])
        schedule.played(preRoll, for: 6)
        let first = schedule.replacesSegment(at: start, duration: 6)
        let second = schedule.replacesSegment(at: start.addingTimeInterval(6), duration: 6)
        #expect(first && !second, "the primary resumes 6 s in")

        var (live, livePreRoll, _) = try InterstitialSnapTests.schedule(#"START-DATE="2020-01-01T11:00:00.000Z",CUE="PRE",DURATION=6"#)
        #expect(live.due(beforeSegmentAt: start.addingTimeInterval(30), duration: 6, joined: true).map(\.id) == ["0"], "a live join plays it too")
        live.played(livePreRoll, for: 6)
        let joined = live.replacesSegment(at: start.addingTimeInterval(30), duration: 6)
        #expect(!joined && !live.isReplaced(start.addingTimeInterval(30.5)), "resumed where it joined")

        // With X-RESUME-OFFSET=0 (InterstitialTests' pre-roll): nothing replaced.
        var (inserted, insertedPreRoll, _) = try InterstitialSnapTests.schedule(#"START-DATE="2020-01-01T11:00:00.000Z",CUE="PRE",DURATION=6,X-RESUME-OFFSET=0"#)
        _ = inserted.due(beforeSegmentAt: start, duration: 6, joined: false)
        inserted.played(insertedPreRoll, for: 6)
        let kept = inserted.replacesSegment(at: start, duration: 6)
        #expect(!kept)
    }
}

/// Post-rolls, as Media3 groups them (androidx/media `HlsInterstitialsAdsLoaderTest`
/// `handleContentTimelineChanged_3postRolls_mergedIntoSinglePostRollAdGroup`: a VOD primary
/// ending at 46 s; a `CUE="POST"` break, one at 46 s exactly, and one at 46.001 s with
/// `X-SNAP="OUT"` play after the primary, in that order; one at 46.001 s without `X-SNAP` is
/// ignored). hls.js also plays a `CUE="POST"` break at the primary's end, whatever its
/// `START-DATE`. None replaces anything.
@Suite("Conformance: post-rolls", .timeLimit(.minutes(1)))
struct PostRollTests {
    @Test func postRollsPlayAfterThePrimarysLastSegmentAndALateOneIsNot() async throws {
        // The primary's three segments end at 14.014 s; the late ones are 2 ms past it (within a millisecond is one place here).
        func range(_ id: String, at seconds: Double, _ more: String = "", asset: String) -> String {
            #"ID="\#(id)",CLASS="com.apple.hls.interstitial",START-DATE="\#(InterstitialTests.date(after: seconds))",\#(more)X-ASSET-URI="../ad/\#(asset)""#
        }
        let ranges = [range("post", at: 0, #"CUE="POST","#, asset: "one.m3u8"), range("at-end", at: 14.014, asset: "two.m3u8"),
                      range("snapped", at: 14.016, #"X-SNAP="OUT","#, asset: "one.m3u8"), range("late", at: 14.016, asset: "missing.m3u8")]
        let server = try InterstitialTests.server(more: ["post": ranges])
        defer { server.stop() }
        let events = await Samples.scan(server.url("primary/post.m3u8"))
        #expect(events.failures.isEmpty, "\(events.failures)")
        let expected = try InterstitialTests.primaryTags(["seg0.m4s", "seg1.m4s", "seg2.m4s"]) + InterstitialTests.adTags(["seg0.ts"], in: "post")
            + InterstitialTests.adTags(["seg1.ts"], in: "at-end") + InterstitialTests.adTags(["seg0.ts"], in: "snapped")
        #expect(InterstitialTests.found(events) == expected)
        #expect(!server.requests.contains { $0.path == "ad/missing.m3u8" }, "the late one is never fetched")
    }
}

/// A break none of whose assets can be had: hls.js marks it in error and drops it from its
/// schedule (src/controller/interstitials-controller.ts, `primaryFallback`; the schedule keeps
/// only events without an error), so the primary plays under it, its `X-RESUME-OFFSET` unused.
/// An asset list that comes empty is no error: the offset holds (hls.js, tests/unit/controller/
/// interstitials-controller.ts, "should handle empty asset-lists with resume offset": resumed at
/// 5 s; "... without resume offset, ignoring date range tag duration": at 0).
@Suite("Conformance: a break that cannot be had", .timeLimit(.minutes(1)))
struct FailedBreakTests {
    /// On the schedule: nothing of it had (`nil`), even an `X-SNAP=OUT` break whose out point
    /// was taken replaces nothing, and forgets that point.
    @Test func theScheduleReplacesNothingForIt() throws {
        var (schedule, interstitial, start) = try InterstitialSnapTests.schedule(#"START-DATE="2020-01-01T11:00:04.000Z",DURATION=30,X-RESUME-OFFSET=30,X-SNAP="OUT""#)
        #expect(schedule.due(beforeSegmentAt: start.addingTimeInterval(6), duration: 6, joined: false).map(\.id) == ["0"])
        schedule.played(interstitial, for: nil)
        let replaced = schedule.replacesSegment(at: start.addingTimeInterval(12), duration: 6)
        #expect(!replaced && !schedule.isReplaced(start.addingTimeInterval(7)))
    }

    @Test(arguments: [("missing", "X-ASSET-URI=\"../ad/missing.m3u8\""), ("missing-list", "X-ASSET-LIST=\"../ad/missing.json\""),
                      ("empty-list", "X-ASSET-LIST=\"../ad/empty.json\"")])
    func theStretchItWouldReplaceIsPlayedUnlessItsListCameEmpty(_ name: String, asset: String) async throws {
        let range = #"ID="\#(name)",CLASS="com.apple.hls.interstitial",START-DATE="\#(InterstitialTests.date(after: 6.006))",DURATION=6.006,X-RESUME-OFFSET=6.006,"# + asset
        let server = try InterstitialTests.server(more: [name: [range]])
        defer { server.stop() }
        let events = await Samples.scan(server.url("primary/\(name).m3u8"))
        let failed = events.failures.filter { if case .interstitialFailed = $0.kind { true } else { false } }
        #expect(failed.count == (name == "empty-list" ? 0 : 1), "\(events.failures)")
        let second = name == "empty-list" ? [] : ["seg1.m4s"]
        #expect(InterstitialTests.found(events) == (try InterstitialTests.primaryTags(Set(["seg0.m4s", "seg2.m4s"] + second))),
                "the second segment's tags played unless the offset replaced it")
    }
}
