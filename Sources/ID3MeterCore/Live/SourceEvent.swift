/// A piece of media as a player would have it buffered: a segment (or, for a plain MPEG-TS
/// input, one timed-ID3 packet) with the tags in it.
public struct MediaChunk: Sendable {
    public var origin: TagOrigin
    /// EXTINF, for segments.
    public var duration: Double?
    public var tags: [TimedTag]

    public init(origin: TagOrigin, duration: Double?, tags: [TimedTag]) {
        self.origin = origin
        self.duration = duration
        self.tags = tags
    }
}

/// What a source knows once it is open, for choosing the frame clock's rate.
public struct SourceInfo: Sendable, Equatable {
    /// `FRAME-RATE` of the chosen variant.
    public var variantFrameRate: Double?
    /// The average frame rate of the video stream, as libavformat probed it.
    public var videoFrameRate: Double?
    public var isLive: Bool

    public init(variantFrameRate: Double? = nil, videoFrameRate: Double? = nil, isLive: Bool) {
        self.variantFrameRate = variantFrameRate
        self.videoFrameRate = videoFrameRate
        self.isLive = isLive
    }
}

/// What a tag source yields, in stream order.
public enum SourceEvent: Sendable {
    case opened(SourceInfo)
    case chunk(MediaChunk)
    case malformed(ID3ParseError, pts: Int64?, origin: TagOrigin)
    /// An input, segment or reload that failed, or segments lost from a live window.
    case failure(InputFailure)
    /// Something read around: a value out of range taken as a fallback, problems summed up.
    case warning(InputFailure)
}
