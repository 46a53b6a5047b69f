/// When a step between two PTS of one discontinuity sequence is a jump (an encoder restart, a
/// splice) rather than time passing: the one rule, with its bounds said by what is compared.
package struct PTSJump: Sendable {
    /// Seconds back, and forward, a step may go and still be time passing.
    package var backward: Double
    package var forward: Double

    /// A segment's start against where the media buffered so far ends (the feeder's timeline):
    /// a live edge can overlap by a few seconds, and a stall leave out up to a minute.
    package static let betweenSegments = PTSJump(backward: 10, forward: 60)
    /// A tag against the tag before it (the QA report and the timeline page): tags never go
    /// back more than a frame or so, and may be missing for ten minutes before a tag-loss check,
    /// not the clock, should judge it.
    package static let betweenTags = PTSJump(backward: 1, forward: 600)

    /// Whether a step of `seconds` (negative: back) is a jump.
    package func isJump(_ seconds: Double) -> Bool { seconds < -backward || seconds > forward }
}
