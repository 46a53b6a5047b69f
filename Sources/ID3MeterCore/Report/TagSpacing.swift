/// How far each Nielsen tag is from the one before it in stream time, and whether that
/// distance means anything: PTS are comparable only within one discontinuity sequence and
/// without a jump. The QA report and the timeline read the same steps, so they never disagree
/// on what is a gap and what is a break.
package struct TagSpacing: Sendable {
    /// What lies between a tag and the one before it.
    public enum Step: Sendable, Equatable {
        /// The first tag with a PTS, or a tag without one: nothing to measure.
        case none
        /// `EXT-X-DISCONTINUITY` between the two: their PTS are not comparable.
        case discontinuity
        /// The PTS jumped within one discontinuity sequence (`PTSJump.betweenTags`): an encoder
        /// restart or a splice.
        case jump(seconds: Double)
        /// Comparable PTS, this many seconds apart.
        case gap(seconds: Double)
    }

    private var previous: (pts: Int64, discontinuitySequence: Int?)?

    public init() {}

    /// The step from the previous tag with a PTS to this one.
    public mutating func step(pts: Int64?, discontinuitySequence: Int?) -> Step {
        guard let pts else { return .none }
        defer { previous = (pts, discontinuitySequence) }
        guard let previous else { return .none }
        guard discontinuitySequence == previous.discontinuitySequence else { return .discontinuity }
        let seconds = PTS.seconds(PTS.distance(from: previous.pts, to: pts))
        if PTSJump.betweenTags.isJump(seconds) { return .jump(seconds: seconds) }
        return .gap(seconds: seconds)
    }

    /// A tag came whose time is unknown: the next step is not measured from the one before it.
    public mutating func forgetPrevious() { previous = nil }

    /// Where `pts` lies from the last tag, when it is comparable with it (a segment's start, say).
    public func distance(to pts: Int64, discontinuitySequence: Int?) -> Double? {
        guard let previous, previous.discontinuitySequence == discontinuitySequence else { return nil }
        let seconds = PTS.seconds(PTS.distance(from: previous.pts, to: pts))
        return PTSJump.betweenTags.isJump(seconds) ? nil : seconds
    }
}
