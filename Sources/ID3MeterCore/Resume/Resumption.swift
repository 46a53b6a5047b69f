/// Where a source restarted from a checkpoint picked up.
public enum Resumption: Sendable, Equatable {
    /// At the segment of the last delivered tag, still in the playlist: nothing lost.
    case atSegment(Int)
    /// That segment had left the live window: the stream was joined at the edge, and segments
    /// `lost` (after the last delivered tag's own) were never read. `seconds` is their
    /// duration: EXTINF where the window still lists them, the target duration where not.
    case atLiveEdge(lost: ClosedRange<Int>?, seconds: Double)
    /// The playlist's media sequence numbers are behind the checkpoint's (an encoder
    /// restarted its count): nothing tells how much was lost; joined at the edge.
    case sequenceWentBack(to: Int)
}
