import ID3MeterCore

/// How a tag read twice is told to be the same tag: read again from another copy after a read
/// of its segment failed (an HLS pathway or redundant stream, a DASH BaseURL), or read from both
/// a variant and its audio rendition. By its PTS and frames: an MPEG-TS tag has no identity of
/// its own (an `emsg` event's id is known to the extractor, which drops its repeats itself).
enum SameTag {
    static func key(_ timed: TimedTag) -> String { "\(timed.pts ?? -1) \(timed.tag.frames)" }
}
