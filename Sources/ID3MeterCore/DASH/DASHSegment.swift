/// One media segment of a Representation, named and timed as its MPD says.
package struct DASHSegment: Sendable, Equatable {
    /// `$Number$`: `startNumber` plus its place (or the timeline's `S@n`).
    package var number: Int
    /// `$Time$`: its start on the media timeline, in `timescale` units (presentation time offset included).
    package var time: Int
    package var duration: Int
    package var timescale: Int
    package var uri: String
    /// The sub-range of `uri` it is (`SegmentList@mediaRange`, a `sidx` reference).
    package var range: ByteRange?
    /// Seconds from its Period's start.
    package var start: Double
    package var seconds: Double { Double(duration) / Double(timescale) }

    package init(number: Int, time: Int, duration: Int, timescale: Int, uri: String, range: ByteRange?, start: Double) {
        (self.number, self.time, self.duration, self.timescale) = (number, time, duration, timescale)
        (self.uri, self.range, self.start) = (uri, range, start)
    }
    package var end: Double { start + seconds }

    /// When a live presentation has it (seconds from its Period's start): at its end, or
    /// `early` seconds before (an `availabilityTimeOffset`), before its start when `early` is
    /// longer than it, as Media3 and shaka-player read the offset (docs/CONFORMANCE.md);
    /// `INF` (infinity): from its start, as low-latency packagers mean it.
    package func availableFrom(early: Double) -> Double {
        early.isFinite ? end - max(early, 0) : start
    }

    /// How far past `until` a segment may start and be available by `until`, for `early`:
    /// bounded, so that an offset of a year asks for no more than a minute's segments ahead.
    package static func lookAhead(early: Double) -> Double { early.isFinite ? min(max(early, 0), 60) : 0 }
}

/// A Representation's segments in one Period, made as they are asked for: a `SegmentTimeline`
/// entry repeated 2^31 times, or a template without an end, costs no memory. The segments are
/// those that end after `from` and start before `until` (seconds from the Period's start) and
/// before the Period's end.
package struct SegmentEnumeration: Sequence, Sendable {
    package let representation: Representation
    package let periodDuration: Double?
    package let from: Double
    package let until: Double?

    package init(representation: Representation, periodDuration: Double?, from: Double = 0, until: Double? = nil) {
        self.representation = representation
        self.periodDuration = periodDuration
        self.from = from
        self.until = until
    }

    /// The Representation's initialisation segment, resolved; `nil` when it has none.
    package var initialization: ResourceRange? {
        let base = representation.baseURL
        switch representation.addressing {
        case .template(let template):
            return template.initialization.map {
                ResourceRange(uri: Location.resolve($0.filled(representationID: representation.id, bandwidth: representation.bandwidth),
                                                    against: base), range: nil)
            }
        case .list(let list): return list.initialization.map { ResourceRange(uri: $0.uri.map { Location.resolve($0, against: base) } ?? base, range: $0.range) }
        case .base(let segmentBase): return segmentBase.initialization.map {
            ResourceRange(uri: $0.uri.map { Location.resolve($0, against: base) } ?? base, range: $0.range)
        }
        case nil: return nil
        }
    }

    package func makeIterator() -> Iterator { Iterator(self) }

    package struct Iterator: IteratorProtocol, Sendable {
        private let timing: SegmentTiming
        private let media: @Sendable (_ number: Int, _ time: Int) -> (uri: String, range: ByteRange?)?
        private let limit: Double?
        private let from: Double
        /// The cursor: the next segment's number and start, and within a timeline its entry and repetition.
        private var number: Int
        private var time: Int
        private var entry = 0
        private var repetition = 0
        private var done = false

        init(_ enumeration: SegmentEnumeration) {
            let representation = enumeration.representation
            limit = [enumeration.until, enumeration.periodDuration].compactMap { $0 }.min()
            from = enumeration.from
            let base = representation.baseURL
            let (id, bandwidth) = (representation.id, representation.bandwidth)
            var timing = SegmentTiming()
            switch representation.addressing {
            case .template(let template):
                timing = template.timing
                media = { number, time in
                    template.media.map { (Location.resolve($0.filled(representationID: id, bandwidth: bandwidth, number: number, time: time),
                                                           against: base), nil) }
                }
            case .list(let list):
                timing = list.timing
                let first = list.timing.startNumber
                media = { number, _ in
                    let place = number - first
                    guard place >= 0, place < list.segments.count else { return nil }
                    let item = list.segments[place]
                    return (item.uri.map { Location.resolve($0, against: base) } ?? base, item.range)
                }
            case .base(let segmentBase):
                // One segment, the whole resource (its `sidx` may cut it into subsegments: the walk reads that).
                timing = segmentBase.timing
                timing.timeline = nil
                timing.duration = enumeration.periodDuration.map { Swift.max(1, Self.units($0, timing.timescale)) } ?? Int.max / 4
                timing.endNumber = timing.startNumber
                let resource = segmentBase.location(against: base)
                media = { _, _ in (resource, nil) }
            case nil:
                media = { _, _ in nil }
                done = true
            }
            self.timing = timing
            number = timing.timeline?.first?.number ?? timing.startNumber
            time = timing.timeline?.first?.time ?? timing.presentationTimeOffset
            skip(to: from)
        }

        package mutating func next() -> DASHSegment? {
            while !done {
                guard let duration = currentDuration else {
                    done = true
                    return nil
                }
                let (segmentNumber, start) = (number, time)
                advance(duration)
                let seconds = Double(start - timing.presentationTimeOffset) / Double(timing.timescale)
                if let limit, seconds >= limit { done = true; return nil }
                if let end = timing.endNumber, segmentNumber > end { done = true; return nil }
                guard let (uri, range) = media(segmentNumber, start) else { done = true; return nil }
                if seconds + Double(duration) / Double(timing.timescale) <= from { continue }
                return DASHSegment(number: segmentNumber, time: start, duration: duration, timescale: timing.timescale, uri: uri,
                                   range: range, start: seconds)
            }
            return nil
        }

        /// The duration of the segment at the cursor; `nil` past the last.
        private var currentDuration: Int? {
            guard let timeline = timing.timeline else { return timing.duration.flatMap { $0 > 0 ? $0 : nil } }
            return entry < timeline.count ? timeline[entry].duration : nil
        }

        /// Moves past a segment of `duration` units.
        private mutating func advance(_ duration: Int) {
            let (nextTime, late) = time.addingReportingOverflow(duration)
            let (nextNumber, far) = number.addingReportingOverflow(1)
            if late || far { done = true; return }
            (time, number) = (nextTime, nextNumber)
            guard let timeline = timing.timeline, entry < timeline.count else { return }
            repetition += 1
            if repetition > repeats(of: entry, in: timeline) { enter(entry + 1, of: timeline) }
        }

        /// Starts timeline entry `place`: its `S@t` places it (where it leaves a hole or steps back, it wins), its `S@n` numbers it.
        private mutating func enter(_ place: Int, of timeline: [TimelineEntry]) {
            entry = place
            repetition = 0
            guard place < timeline.count else { return }
            if let start = timeline[place].time { time = start }
            if let given = timeline[place].number { number = given }
        }

        /// How many times the entry repeats: `r`, or for `r = -1` until the next entry's `t` or the limit.
        private func repeats(of place: Int, in timeline: [TimelineEntry]) -> Int {
            let item = timeline[place]
            guard item.repeatCount < 0 else { return item.repeatCount }
            let start = time - repetition * item.duration   // the entry's first segment
            let end: Int? = place + 1 < timeline.count ? timeline[place + 1].time
                : limit.map { timing.presentationTimeOffset + Self.units($0, timing.timescale) }
            guard let end, end > start else { return 0 }
            return Swift.max(0, (end - start + item.duration - 1) / item.duration - 1)
        }

        /// Jumps to the first segment that ends after `from` seconds, without making those before it.
        private mutating func skip(to from: Double) {
            guard from > 0, !done else { return }
            let target = timing.presentationTimeOffset + Self.units(from, timing.timescale)
            guard let timeline = timing.timeline else {
                guard let duration = timing.duration, duration > 0, target > time else { return }
                let steps = (target - time) / duration
                number += steps
                time += steps * duration
                return
            }
            while entry < timeline.count {
                let item = timeline[entry]
                let count = repeats(of: entry, in: timeline) + 1
                let (span, overflow) = item.duration.multipliedReportingOverflow(by: count)
                if !overflow, time + span <= target {
                    number += count
                    time += span
                    enter(entry + 1, of: timeline)
                    continue
                }
                let steps = Swift.min(Swift.max(0, (target - time) / item.duration), count - 1)
                number += steps
                repetition = steps
                time += steps * item.duration
                return
            }
        }

        /// `seconds` in `timescale` units, held to what an Int can add without overflow.
        static func units(_ seconds: Double, _ timescale: Int) -> Int {
            let value = seconds * Double(timescale)
            guard value.isFinite else { return value > 0 ? Int.max / 4 : 0 }
            return Int(Swift.min(Swift.max(value, 0), Double(Int.max / 4)))
        }
    }
}
