/// What reading media yields, in stream order: the one vocabulary from the extractors, through
/// scans and tag sources, to the feeder and the reports. Each step passes on what it does not
/// consume as it is, so a failure reaches the caller with the value its reader made.
public enum MediaEvent: Sendable {
    /// The source is open, and this is what it declares about its frame rate. Sources that
    /// feed a frame clock send it once, before their first tag; extractors never do.
    indirect case opened(SourceInfo)
    /// An ID3 tag of any owner, at its PTS; its Nielsen frames are `nielsenTags`.
    case tag(TimedTag)
    /// A segment was read, after its tags: a player's buffer has grown by the segment's
    /// duration, and reports count the segments that held no tag.
    indirect case segment(TagOrigin.Segment)
    /// The program's media (its audio, in MPEG-TS) at `pts`: the first and last of an input,
    /// so that the QA report knows the span of media its tags should cover.
    indirect case mediaTime(Int64, origin: TagOrigin)
    /// A timed-ID3 packet whose bytes do not decode; `pts` places it.
    indirect case malformed(ID3ParseError, pts: Int64?, origin: TagOrigin)
    /// An input, segment or reload that failed, bytes lost to damage, or segments lost from a
    /// live window.
    indirect case failure(InputFailure)
    /// Something read around: a value out of range taken as a fallback, a recording cut
    /// short, problems summed up.
    indirect case warning(InputFailure)
    /// A source started from a checkpoint (`--state`) says where it picked up, before its
    /// first segment.
    indirect case resumed(Resumption)
}
