import Testing
import ID3MeterCore
import SampleGenerator

/// Tag-loss alerts on hand-picked times: every expected time is worked out from the inputs.
@Suite("Tag-loss alerts")
struct TagLossWatchTests {
    static let (good, placeholder) = {
        var factory = NielsenTagFactory(seed: 7)
        return (NielsenTag(owner: factory.owner(secondsIntoDay: 100))!,
                NielsenTag(owner: factory.owner(secondsIntoDay: 100, placeholder: true))!)
    }()
    static let invalid = NielsenTag(owner: NielsenTag.ownerPrefix + "/short")!

    @Test func theTagsUsedAreWhatTheirNamesSay() {
        #expect(Self.good.isValid && !Self.good.hasPlaceholderPCCID)
        #expect(Self.placeholder.isValid && Self.placeholder.hasPlaceholderPCCID)
        #expect(!Self.invalid.isValid)
    }

    @Test func aChannelThatNeverDeliversAlertsFromTheStart() {
        var watch = TagLossWatch(alertAfter: 30, start: 5)
        #expect(watch.nextCheck() == 35)
        #expect(watch.check(at: 34.9).isEmpty)
        #expect(watch.check(at: 35) == [.init(alert: .noTags, active: true, at: 35)])
        #expect(watch.check(at: 60).isEmpty, "an alert starts once")
        #expect(watch.nextCheck() == nil, "only a tag can end it")
    }

    @Test func tagsStopAndComeBack() {
        var watch = TagLossWatch(alertAfter: 30)
        for second in 0..<10 { watch.delivered(Self.good, at: Double(second)) }
        #expect(watch.check(at: 9).isEmpty)
        #expect(watch.nextCheck() == 39)
        #expect(watch.check(at: 39) == [.init(alert: .noTags, active: true, at: 39)])
        watch.delivered(Self.good, at: 50)
        #expect(watch.check(at: 50) == [.init(alert: .noTags, active: false, at: 50)])
        #expect(watch.active.isEmpty)
        #expect(watch.nextCheck() == 80)
    }

    @Test func onlyPlaceholderOrInvalidTagsAlertToo() {
        var watch = TagLossWatch(alertAfter: 10)
        watch.delivered(Self.good, at: 0)
        for second in 1...20 { watch.delivered(second.isMultiple(of: 2) ? Self.placeholder : Self.invalid, at: Double(second)) }
        #expect(watch.check(at: 9.5).isEmpty)
        #expect(watch.check(at: 10) == [.init(alert: .onlyUncreditableTags, active: true, at: 10)])
        // Then no tags at all: one alert ends as the other starts.
        #expect(watch.check(at: 30) == [.init(alert: .onlyUncreditableTags, active: false, at: 30),
                                        .init(alert: .noTags, active: true, at: 30)])
        watch.delivered(Self.placeholder, at: 31)
        #expect(watch.check(at: 31) == [.init(alert: .noTags, active: false, at: 31),
                                        .init(alert: .onlyUncreditableTags, active: true, at: 31)])
        watch.delivered(Self.good, at: 32)
        #expect(watch.check(at: 32) == [.init(alert: .onlyUncreditableTags, active: false, at: 32)])
    }

    @Test func aLivePlaylistThatStopsAdvancingIsStaleAfterThreeTargetDurations() {
        var watch = TagLossWatch(alertAfter: 1_000)
        watch.opened(isLive: true, targetDuration: 2, at: 0)
        watch.segmentRead(at: 2)
        #expect(watch.nextCheck() == 8)
        #expect(watch.check(at: 7.9).isEmpty)
        #expect(watch.check(at: 8) == [.init(alert: .playlistStale, active: true, at: 8)])
        watch.segmentRead(at: 9)
        #expect(watch.check(at: 9) == [.init(alert: .playlistStale, active: false, at: 9)])

        var vod = TagLossWatch(alertAfter: 1_000)
        vod.opened(isLive: false, targetDuration: 2, at: 0)
        #expect(vod.check(at: 100).isEmpty, "a VOD playlist never advances, and is not stale")
    }

    /// Issue 55: each fault by its own name. Segments that fail while the playlist lists new ones
    /// are `segments_failing`, never `playlist_stale` (the playlist advanced: the failed segments
    /// are how the meter knows it); reloads that fail are `playlist_unreachable`, and stale waits
    /// until the playlist answers again; a playlist that answers and lists nothing new is stale.
    @Test func eachFaultIsNamedForWhatItIs() {
        var cdn = TagLossWatch(alertAfter: 1_000)
        cdn.opened(isLive: true, targetDuration: 2, at: 0)
        cdn.segmentRead(at: 2)
        for second in stride(from: 4.0, through: 20, by: 2) {
            cdn.segmentFailed(at: second)
            let changes = cdn.check(at: second)
            #expect(changes == (second == 4 ? [.init(alert: .segmentsFailing, active: true, at: 4)] : []), "\(second) s: \(changes)")
        }
        #expect(cdn.failingSegments == 9 && cdn.active == [.segmentsFailing])
        cdn.segmentRead(at: 22)
        #expect(cdn.check(at: 22) == [.init(alert: .segmentsFailing, active: false, at: 22)] && cdn.failingSegments == 0)

        var origin = TagLossWatch(alertAfter: 1_000)
        origin.opened(isLive: true, targetDuration: 2, at: 0)
        origin.segmentRead(at: 2)
        origin.playlistFailing(true)
        #expect(origin.nextCheck() == 1_000, "no_tags' timer alone: no stale timer while the playlist does not answer")
        #expect(origin.check(at: 3) == [.init(alert: .playlistUnreachable, active: true, at: 3)])
        #expect(origin.check(at: 30).isEmpty, "not stale: it does not answer")
        origin.playlistFailing(false)
        #expect(origin.check(at: 31) == [.init(alert: .playlistUnreachable, active: false, at: 31), .init(alert: .playlistStale, active: true, at: 31)],
                "answering again without a new segment, for longer than three target durations: stale")
        origin.segmentRead(at: 32)
        #expect(origin.check(at: 32) == [.init(alert: .playlistStale, active: false, at: 32)])

        // Bytes that came and do not parse (an error page served with 200): unreadable, not a failing CDN.
        var garbage = TagLossWatch(alertAfter: 1_000)
        garbage.opened(isLive: true, targetDuration: 2, at: 0)
        garbage.segmentFailed(at: 2, unparsable: true)
        #expect(garbage.check(at: 2) == [.init(alert: .streamUnreadable, active: true, at: 2)])
        garbage.segmentFailed(at: 4)
        #expect(garbage.check(at: 4) == [.init(alert: .segmentsFailing, active: true, at: 4)], "each its own, both at once")
        #expect(garbage.check(at: 9).isEmpty, "the playlist advanced: not stale")
        garbage.segmentRead(at: 10)
        #expect(garbage.check(at: 10) == [.init(alert: .segmentsFailing, active: false, at: 10), .init(alert: .streamUnreadable, active: false, at: 10)])
    }

    /// A VOD channel's stream that ended as meant owes nothing more: what was open ends with it,
    /// and nothing starts after it, until it is opened again.
    @Test func aStreamThatEndedAsMeantRaisesNothing() {
        var watch = TagLossWatch(alertAfter: 10)
        watch.opened(isLive: false, targetDuration: 2, at: 0)
        watch.segmentFailed(at: 5)
        #expect(watch.check(at: 5) == [.init(alert: .segmentsFailing, active: true, at: 5)])
        watch.streamEnded()
        #expect(watch.check(at: 6) == [.init(alert: .segmentsFailing, active: false, at: 6)])
        #expect(watch.nextCheck() == nil && watch.check(at: 1_000).isEmpty, "no no_tags after the end")
        watch.opened(isLive: false, targetDuration: 2, at: 2_000)
        #expect(watch.check(at: 2_001) == [.init(alert: .noTags, active: true, at: 2_001)], "no tag since the start: due again")
    }
}
