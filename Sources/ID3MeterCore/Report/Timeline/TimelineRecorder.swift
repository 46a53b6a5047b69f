import FoundationEssentials

/// Lays a source's Nielsen tags out in time as its events come, for `TagTimeline`.
///
/// The axis follows the PTS: a tag sits as far after the previous one as its PTS says. Where the
/// PTS stop being comparable (a discontinuity, a jump), the axis steps by the wall-clock time
/// between the two tags when both have one, else not at all, and the break is marked. A
/// segment without a tag is placed by its first PTS when that is comparable with the last tag,
/// else after the segment before it.
package struct TimelineRecorder: Sendable {
    /// Which tags keep their details.
    public enum Details: Sendable {
        /// As long as the report's shared budget lasts (a scan).
        case budget(DetailBudget)
        /// The latest this many (a live channel: the newest tags are the ones looked at).
        case latest(Int)
    }

    /// More marks than this in one timeline are drawn in bins: a page stays fast whatever the density.
    public static let markLimit = 2_000
    /// How many bins an aggregated timeline has.
    public static let binCount = 1_000

    private let details: Details
    /// Keep only the last this many seconds of the axis (a live channel's last hour).
    private let window: Double?

    private var marks: [StoredMark] = []
    /// Which mark `marks[0]` is, counting every mark ever added: details are kept by that number.
    private var firstMark = 0
    private var detailsKept: [Int: TagDetail] = [:]
    private var spans: [TagTimeline.Span] = []
    private var breaks: [TagTimeline.Break] = []
    private var start: Date?
    private var spacing = TagSpacing()
    private var last: (t: Double, date: Date?)?
    private var lastSegmentEnd: Double?
    private var tagsInSegment = 0
    /// The numbers of the marks whose details are kept, oldest first (`.latest`).
    private var detailed: [Int] = []
    private var lastGap: Int?

    public init(details: Details, window: Double? = nil) {
        self.details = details
        self.window = window
    }

    /// Takes the next event in stream order. `date` is the wall-clock time the caller puts on
    /// the event (a live channel: when it was read); by default a tag's PROGRAM-DATE-TIME.
    public mutating func add(_ event: MediaEvent, date: Date? = nil) {
        switch event {
        case .tag(let timed):
            for tag in timed.nielsenTags { add(tag, timed, date: date ?? timed.programDateTime) }
        case .segment(let segment):
            add(segment)
        case .opened, .malformed, .failure, .warning, .resumed, .mediaTime:
            break
        }
        if let window, let end = last?.t { trim(before: end - window) }
        if window != nil { cap() }
    }

    private mutating func add(_ tag: NielsenTag, _ timed: TimedTag, date: Date?) {
        let segment = timed.origin.segment
        let t: Double
        switch spacing.step(pts: timed.pts, discontinuitySequence: segment?.discontinuitySequence) {
        case .none:
            t = last?.t ?? firstPosition(timed)
        case .gap(let seconds):
            t = (last?.t ?? 0) + max(seconds, 0)
            if seconds < SourceReport.shortGap || seconds > SourceReport.longGap {
                addGap(.init(from: last?.t ?? 0, to: t, kind: seconds < SourceReport.shortGap ? .shortGap : .longGap, seconds: seconds))
            }
        case .discontinuity:
            t = stepOverBreak(to: date)
            breaks.append(.init(t: t, detail: "EXT-X-DISCONTINUITY before this tag"))
        case .jump(let seconds):
            t = stepOverBreak(to: date)
            breaks.append(.init(t: t, detail: "PTS jumps \(FixedPoint.string(seconds, places: 3, sign: true)) s"))
        }
        if start == nil, let date { start = date.addingTimeInterval(-t) }
        last = (t, date)
        tagsInSegment += 1
        let kind = TagTimeline.Kind(tag)
        if keepsDetail(kind) { detailsKept[firstMark + marks.count] = TagDetail(tag, timed) }
        marks.append(StoredMark(t: t, kind: kind, pts: timed.pts))
    }

    /// Back-to-back gaps of a kind are one region: drawn apart they would look the same, and a
    /// tag every second would make a region of every one.
    private mutating func addGap(_ gap: TagTimeline.Span) {
        if let index = lastGap, spans[index].kind == gap.kind, spans[index].to == gap.from {
            spans[index].absorb(gap)
        } else {
            lastGap = spans.count
            spans.append(gap)
        }
    }

    /// The first tag sits after the segments read before it, at its offset into its own segment.
    private func firstPosition(_ timed: TimedTag) -> Double {
        var offset = 0.0
        if let pts = timed.pts, let start = timed.origin.segment?.startPTS {
            offset = max(PTS.seconds(PTS.distance(from: start, to: pts)), 0)
        }
        return (lastSegmentEnd ?? 0) + offset
    }

    private func stepOverBreak(to date: Date?) -> Double {
        guard let last else { return lastSegmentEnd ?? 0 }
        guard let date, let before = last.date else { return last.t }
        return last.t + max(date.timeIntervalSince(before), 0)
    }

    private mutating func add(_ segment: TagOrigin.Segment) {
        defer { tagsInSegment = 0 }
        var from = lastSegmentEnd ?? last?.t ?? 0
        if let pts = segment.startPTS, let last,
           let distance = spacing.distance(to: pts, discontinuitySequence: segment.discontinuitySequence) {
            from = last.t + distance
        }
        let to = from + max(segment.duration ?? 0, 0)
        lastSegmentEnd = max(to, last?.t ?? to)
        guard tagsInSegment == 0 else { return }
        spans.append(.init(from: from, to: to, kind: .emptySegment, seconds: segment.duration ?? 0, label: segment.uri))
    }

    private mutating func keepsDetail(_ kind: TagTimeline.Kind) -> Bool {
        switch details {
        case .budget(let budget):
            return budget.take(flagged: kind != .valid)
        case .latest(let count):
            detailed.append(firstMark + marks.count)
            if detailed.count > count { detailsKept[detailed.removeFirst()] = nil }
            return count > 0
        }
    }

    /// A windowed (live) timeline keeps at most this many marks, regions and breaks each: an hour
    /// is a bound in time only, and a hostile stream can send a tag or a segment every millisecond.
    public static let windowedLimit = 20_000

    /// Drops the oldest past `windowedLimit`, a tenth of it at a time so that a tag costs no copy.
    private mutating func cap() {
        let limit = Self.windowedLimit
        if marks.count > limit + limit / 10 { dropMarks(marks.count - limit) }
        if spans.count > limit + limit / 10 {
            spans.removeFirst(spans.count - limit)
            lastGap = spans.lastIndex { $0.kind != .emptySegment }
        }
        if breaks.count > limit + limit / 10 { breaks.removeFirst(breaks.count - limit) }
    }

    /// Drops what lies before `cutoff`, a tenth of the window at a time so that a tag costs no copy.
    private mutating func trim(before cutoff: Double) {
        guard let window, let first = marks.first?.t ?? spans.first?.to, first < cutoff - window / 10 else { return }
        dropMarks(marks.prefix { $0.t < cutoff }.count)
        spans.removeAll { $0.to < cutoff }
        lastGap = spans.lastIndex { $0.kind != .emptySegment }
        breaks.removeAll { $0.t < cutoff }
    }

    /// Drops the oldest `count` marks, and their details.
    private mutating func dropMarks(_ count: Int) {
        marks.removeFirst(count)
        firstMark += count
        detailed.removeAll { $0 < firstMark }
        if detailsKept.keys.contains(where: { $0 < firstMark }) { detailsKept = detailsKept.filter { $0.key >= firstMark } }
    }

    /// The timeline so far (within the window), aggregated into bins when its marks would overlap.
    package var timeline: TagTimeline {
        let cutoff = window.flatMap { window in last.map { $0.t - window } } ?? -Double.infinity
        let skipped = marks.prefix { $0.t < cutoff }.count
        let marks = marks[skipped...].enumerated().map { offset, stored in
            TagTimeline.Mark(t: stored.t, kind: stored.kind, pts: stored.pts, detail: detailsKept[firstMark + skipped + offset])
        }
        let spans = spans.filter { $0.to >= cutoff }
        let breaks = breaks.filter { $0.t >= cutoff }
        let origin = cutoff.isFinite ? max(cutoff, 0) : 0
        let end = max(marks.last?.t ?? 0, spans.map(\.to).max() ?? 0, breaks.last?.t ?? 0)
        var timeline = TagTimeline(start: start.map { $0.addingTimeInterval(origin) }, end: end - origin, tags: marks.count)
        timeline.withoutDetails = marks.filter { $0.detail == nil }.count
        func shifted(_ t: Double) -> Double { t - origin }
        guard marks.count > Self.markLimit else {
            timeline.marks = marks.map { var mark = $0; mark.t = shifted(mark.t); return mark }
            timeline.spans = spans.map { var span = $0; span.from = max(shifted(span.from), 0); span.to = shifted(span.to); return span }
            timeline.breaks = breaks.map { var mark = $0; mark.t = shifted(mark.t); return mark }
            return timeline
        }
        let width = max(timeline.end / Double(Self.binCount), 0.001)
        timeline.binSeconds = width
        timeline.withoutDetails = marks.count
        for mark in marks {
            let t = shifted(mark.t)
            let index = Double(min(Int(t / width), Self.binCount - 1))
            if timeline.bins.last.map({ $0.from != index * width }) ?? true {
                timeline.bins.append(.init(from: index * width, to: (index + 1) * width))
            }
            timeline.bins[timeline.bins.count - 1].add(mark)
        }
        timeline.spans = Self.merged(spans.map { var span = $0; span.from = max(shifted(span.from), 0); span.to = shifted(span.to); return span },
                                     within: width)
        for item in breaks {
            let t = shifted(item.t)
            if let previous = timeline.breaks.last, t - previous.t < width {
                timeline.breaks[timeline.breaks.count - 1].count += 1
            } else {
                timeline.breaks.append(.init(t: t, detail: item.detail))
            }
        }
        return timeline
    }

    /// Spans of a kind closer than `width` to the one before, as one: what a page cannot tell apart anyway.
    static func merged(_ spans: [TagTimeline.Span], within width: Double) -> [TagTimeline.Span] {
        var merged: [TagTimeline.Span] = []
        var lastOfKind: [TagTimeline.Span.Kind: Int] = [:]
        for span in spans {
            if let index = lastOfKind[span.kind], span.from - merged[index].to < width {
                merged[index].absorb(span)
            } else {
                lastOfKind[span.kind] = merged.count
                merged.append(span)
            }
        }
        return merged
    }
}

extension TagTimeline.Span {
    /// Takes `other` into this region: it reaches to `other`'s end and keeps the worst length
    /// (the shortest of short gaps, the longest of the rest); merged segments name none.
    mutating func absorb(_ other: TagTimeline.Span) {
        to = max(to, other.to)
        count += other.count
        seconds = kind == .shortGap ? min(seconds, other.seconds) : max(seconds, other.seconds)
        if kind == .emptySegment { label = nil }
    }
}

extension TagTimeline.Bin {
    mutating func add(_ mark: TagTimeline.Mark) {
        switch mark.kind {
        case .valid: valid += 1
        case .invalid: invalid += 1
        case .placeholder: placeholder += 1
        }
        if firstPTS == nil { firstPTS = mark.pts }
        lastPTS = mark.pts ?? lastPTS
    }
}
