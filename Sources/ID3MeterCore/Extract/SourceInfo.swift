/// What a source knows once it is open, for choosing the frame clock's rate.
public struct SourceInfo: Sendable, Equatable {
    /// `FRAME-RATE` of the chosen variant.
    public var variantFrameRate: Double?
    /// The average frame rate of the video stream, as libavformat probed it.
    public var videoFrameRate: Double?
    /// A live playlist (no `EXT-X-ENDLIST`): followed as it slides.
    public var isLive: Bool
    /// `EXT-X-TARGETDURATION` of a playlist: how often a live one brings a segment.
    public var targetDuration: Double?

    public init(variantFrameRate: Double? = nil, videoFrameRate: Double? = nil, isLive: Bool, targetDuration: Double? = nil) {
        self.variantFrameRate = variantFrameRate
        self.videoFrameRate = videoFrameRate
        self.isLive = isLive
        self.targetDuration = targetDuration
    }
}
