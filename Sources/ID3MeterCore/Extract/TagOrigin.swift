import Foundation

/// Where a tag was found: the input as the user named it and, for HLS, the segment.
public struct TagOrigin: Sendable, Equatable {
    public var source: String
    public var segment: SegmentOrigin?

    public init(source: String, segment: SegmentOrigin? = nil) {
        self.source = source
        self.segment = segment
    }
}

public struct SegmentOrigin: Sendable, Equatable {
    public var uri: String
    public var mediaSequence: Int
    public var discontinuitySequence: Int
    public var programDateTime: Date?
    /// The segment's first PTS, which its PROGRAM-DATE-TIME refers to.
    public var startPTS: Int64?
    /// EXTINF: how much media time the segment adds to a player's buffer.
    public var duration: Double?

    public init(uri: String, mediaSequence: Int, discontinuitySequence: Int = 0, programDateTime: Date? = nil,
                startPTS: Int64? = nil, duration: Double? = nil) {
        self.uri = uri
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.programDateTime = programDateTime
        self.startPTS = startPTS
        self.duration = duration
    }
}

/// A decoded ID3 tag with its presentation time.
public struct TimedTag: Sendable {
    public let tag: ID3Tag
    public let pts: Int64?
    public let origin: TagOrigin
    /// The tag's Nielsen PRIV frames, parsed once.
    public let nielsenTags: [NielsenTag]

    public init(tag: ID3Tag, pts: Int64?, origin: TagOrigin) {
        self.tag = tag
        self.pts = pts
        self.origin = origin
        nielsenTags = tag.privFrames.compactMap { NielsenTag(owner: $0.owner) }
    }

    /// The tag's wall-clock time: its segment's PROGRAM-DATE-TIME plus its distance
    /// from the segment's start.
    public var programDateTime: Date? {
        guard let segment = origin.segment, let date = segment.programDateTime else { return nil }
        guard let pts, let start = segment.startPTS else { return date }
        return date.addingTimeInterval(PTS.seconds(PTS.distance(from: start, to: pts)))
    }

}
