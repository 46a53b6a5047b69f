/// Segments of a live playlist that left its window before they could be fetched: the cause of
/// the failure that says so, for what counts them.
public struct SegmentsLost: Error, Sendable {
    public var sequences: ClosedRange<Int>
}
