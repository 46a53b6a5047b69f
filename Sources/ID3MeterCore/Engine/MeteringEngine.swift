import Foundation

/// What a player knows about a tag besides the payload it hands the SDK.
public struct TagContext: Sendable, Equatable {
    public var pts: Int64?
    public var origin: TagOrigin
    public var programDateTime: Date?

    public init(pts: Int64?, origin: TagOrigin, programDateTime: Date?) {
        self.pts = pts
        self.origin = origin
        self.programDateTime = programDateTime
    }

    public init(_ tag: TimedTag) {
        self.init(pts: tag.pts, origin: tag.origin, programDateTime: tag.programDateTime)
    }
}

/// The Nielsen App SDK's metering API, as a DTVR player calls it. `sendID3` also receives the
/// tag's context, which an adapter to the real SDK ignores and the reference engine records.
public protocol MeteringEngine: AnyObject {
    /// Starts a viewing session on a channel.
    func play(channelName: String)
    /// Content metadata as JSON, for DTVR `{"type":"content","adModel":"1"|"2"}`.
    func loadMetadata(_ json: String)
    func sendID3(_ payload: String, context: TagContext)
    /// Called once a second while playing, in seconds.
    func playheadPosition(_ position: Int64)
    func stop()
    func end()
}
