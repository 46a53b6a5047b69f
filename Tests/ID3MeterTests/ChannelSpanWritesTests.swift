import Testing
@testable import ID3MeterServe

/// A fleet's collector writes a channel's span once a minute, not once a batch, and never loses
/// the latest time heard of it: it goes with the next write, or when the collector stops.
@Suite("Channel spans written by the minute")
struct ChannelSpanWritesTests {
    typealias Span = ChannelSpanWrites.Span
    /// 2026-11-18T00:00:00Z, a minute's start.
    static let t = 1_795_046_400.0

    /// A batch's spans to write, then written as its committed transaction would.
    static func committed(_ spans: ChannelSpanWrites, _ batch: [Span]) -> [Span] {
        let written = spans.toWrite(batch)
        spans.wrote(written)
        return written
    }

    @Test func aChannelIsWrittenWhenNewEarlierInALaterMinuteOrDeleted() {
        let spans = ChannelSpanWrites()
        let t = Self.t
        #expect(Self.committed(spans, [Span(channel: "a", first: t + 1, last: t + 1)]) == [Span(channel: "a", first: t + 1, last: t + 1)], "new")
        #expect(Self.committed(spans, [Span(channel: "a", first: t + 2, last: t + 30)]).isEmpty, "the same minute: waits")
        #expect(Self.committed(spans, [Span(channel: "a", first: t + 31, last: t + 40)]).isEmpty)
        // The next minute: written with the latest time heard.
        #expect(Self.committed(spans, [Span(channel: "a", first: t + 60, last: t + 61)]) == [Span(channel: "a", first: t + 60, last: t + 61)])
        #expect(Self.committed(spans, [Span(channel: "a", first: t + 62, last: t + 70)]).isEmpty)
        // A record older than any written (a spool drained late): written at once.
        #expect(Self.committed(spans, [Span(channel: "a", first: t - 5, last: t - 5)]) == [Span(channel: "a", first: t - 5, last: t + 70)],
                "with the waiting last time")
        #expect(Self.committed(spans, [Span(channel: "a", first: t + 71, last: t + 72)]).isEmpty)
        // A deletion: written at once, with the latest time heard, so that it stands only if nothing was heard after it.
        #expect(Self.committed(spans, [Span(channel: "a", first: t + 65, last: t + 65, deleted: t + 66)])
                == [Span(channel: "a", first: t + 65, last: t + 72, deleted: t + 66)])
        #expect(spans.pending().isEmpty)
    }

    @Test func whatWaitsIsWrittenWhenTheCollectorStopsOnce() {
        let spans = ChannelSpanWrites()
        let t = Self.t
        _ = Self.committed(spans, [Span(channel: "b", first: t, last: t), Span(channel: "a", first: t, last: t)])
        _ = Self.committed(spans, [Span(channel: "a", first: t + 10, last: t + 20), Span(channel: "b", first: t + 1, last: t + 1)])
        #expect(spans.pending() == [Span(channel: "a", first: t, last: t + 20), Span(channel: "b", first: t, last: t + 1)])
        #expect(spans.pending().isEmpty, "once")
    }

    /// A batch whose transaction rolled back wrote nothing: its channel is written by the next.
    @Test func aSpanNotCommittedIsWrittenAgain() {
        let spans = ChannelSpanWrites()
        let t = Self.t
        #expect(spans.toWrite([Span(channel: "a", first: t, last: t)]).count == 1)
        #expect(spans.toWrite([Span(channel: "a", first: t + 1, last: t + 1)]) == [Span(channel: "a", first: t + 1, last: t + 1)])
        #expect(spans.pending().isEmpty, "nothing written, so nothing waits either")
    }

    @Test func pastItsCapacityEveryChannelIsWrittenAnew() {
        let spans = ChannelSpanWrites(capacity: 2)
        let t = Self.t
        _ = Self.committed(spans, [Span(channel: "a", first: t, last: t), Span(channel: "b", first: t, last: t)])
        #expect(Self.committed(spans, [Span(channel: "a", first: t + 1, last: t + 1)]).isEmpty)
        #expect(Self.committed(spans, [Span(channel: "c", first: t, last: t)]).count == 1)
        #expect(Self.committed(spans, [Span(channel: "a", first: t + 2, last: t + 2)]).count == 1, "forgotten: written again")
    }
}
