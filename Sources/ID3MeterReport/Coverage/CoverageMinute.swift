import ID3MeterCore

/// What one meter's deliveries of a channel in one minute tell the coverage report: how many tags
/// of each kind, and where the creditable ones lie, exactly enough to find every gap of
/// `gapThreshold` or more. The collector folds each batch into these as it stores it, so that a
/// month's report reads 43,200 rows a channel rather than every tag.
///
/// Why four times are enough: inside one minute, two intervals of 30 s or more between
/// consecutive tags cannot both fit, so a minute's creditable tags are its first, its last and
/// at most one such hole; every other interval between them is shorter than a gap. Tags folded
/// in any order give the same minute (a meter's resend, a spool drained late).
package struct CoverageMinute: Sendable, Equatable {
    /// The shortest interval without a creditable tag that the report calls a gap: `serve`'s
    /// default `alert_after`. At most one fits inside a minute, which the representation needs.
    package static let gapThreshold = 30.0

    /// Unix time divided by 60, rounded down.
    package var minute: Int
    package var creditable = 0
    package var info = 0
    package var placeholder = 0
    package var invalid = 0
    /// The first and last creditable tags' times (Unix seconds).
    package var first: Double?
    package var last: Double?
    /// The interval of `gapThreshold` or more between two creditable tags of the minute, if any.
    package var hole: ClosedRange<Double>?
    /// The first and last INFO tags' times: INFO cadence is judged over minutes (a gap of 310 s).
    package var infoFirst: Double?
    package var infoLast: Double?

    package init(minute: Int) { self.minute = minute }

    package init(minute: Int, creditable: Int, info: Int, placeholder: Int, invalid: Int, first: Double?, last: Double?,
                 hole: ClosedRange<Double>?, infoFirst: Double?, infoLast: Double?) {
        self.minute = minute
        (self.creditable, self.info, self.placeholder, self.invalid) = (creditable, info, placeholder, invalid)
        (self.first, self.last, self.hole, self.infoFirst, self.infoLast) = (first, last, hole, infoFirst, infoLast)
    }

    /// The times the coverage model places (Unix seconds, 1970 to 2100): a record outside is
    /// refused by the collector and left out of a report read from files.
    package static let times = 0.0...4_102_444_800.0

    /// The minute of `time`, which is within `times` (a time outside is held to its bounds).
    package static func minute(of time: Double) -> Int {
        Int((min(max(time.isNaN ? 0 : time, times.lowerBound), times.upperBound) / 60).rounded(.down))
    }

    /// Folds in a tag of `credit` delivered at `time`, which lies in this minute.
    package mutating func add(_ credit: TagCredit, at time: Double) {
        switch credit {
        case .creditable:
            creditable += 1
            addCreditable(at: time)
        case .info:
            info += 1
            infoFirst = min(infoFirst ?? time, time)
            infoLast = max(infoLast ?? time, time)
        case .placeholder: placeholder += 1
        case .invalid: invalid += 1
        }
    }

    private mutating func addCreditable(at time: Double) {
        guard let first, let last else {
            (first, last) = (time, time)
            return
        }
        if time < first {
            if first - time >= Self.gapThreshold { hole = time...first }
            self.first = time
        } else if time > last {
            if time - last >= Self.gapThreshold { hole = last...time }
            self.last = time
        } else if let hole, hole.lowerBound < time, time < hole.upperBound {
            // The tag splits the hole: what is left of it on one side may still be a gap.
            self.hole = time - hole.lowerBound >= Self.gapThreshold ? hole.lowerBound...time
                : hole.upperBound - time >= Self.gapThreshold ? time...hole.upperBound : nil
        }
    }

    /// The stretches the minute's creditable tags cover: no interval in them reaches a gap.
    var covered: [ClosedRange<Double>] {
        guard let first, let last else { return [] }
        guard let hole else { return [first...last] }
        return [first...hole.lowerBound, hole.upperBound...last]
    }
}

/// What a delivered tag can do for crediting, as far as its visible fields tell
/// (`NielsenTag.isCreditable`): count a viewer, describe the SDK (INFO), or neither.
package enum TagCredit: String, Sendable, CaseIterable {
    case creditable
    case info
    /// A DATA tag with the placeholder PC CID: the SDK had not latched onto the source yet.
    case placeholder
    /// Not the shape Nielsen documents.
    case invalid

    package init(payload: String) {
        guard let tag = NielsenTag(owner: payload), tag.isValid else {
            self = .invalid
            return
        }
        self = tag.kind == .info ? .info : tag.hasPlaceholderPCCID ? .placeholder : .creditable
    }
}
