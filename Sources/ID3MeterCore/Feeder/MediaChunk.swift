/// A piece of media as a player has it buffered: a segment with the tags it brought, or, for an
/// input without segments, one tag.
struct MediaChunk: Sendable {
    var segment: TagOrigin.Segment?
    /// Media time the chunk adds beyond its tags: the segment's EXTINF, when it was read.
    var duration: Double?
    var tags: [TimedTag]
}
