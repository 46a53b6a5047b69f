import FoundationEssentials

/// What a player knows about a tag besides the payload it hands the SDK.
public struct TagContext: Sendable, Equatable {
    /// The tag's PTS as carried (90 kHz, 33 bits), when the carrier gives one.
    public var pts: Int64?
    /// The input and segment the tag came from.
    public var origin: TagOrigin
    /// The tag's wall-clock time, from its segment's `EXT-X-PROGRAM-DATE-TIME`.
    public var programDateTime: Date?
    /// The program and PID of an MPEG-TS tag.
    public var transportStream: TimedTag.TransportStreamPlace?

    public init(pts: Int64?, origin: TagOrigin, programDateTime: Date?, transportStream: TimedTag.TransportStreamPlace? = nil) {
        self.pts = pts
        self.origin = origin
        self.programDateTime = programDateTime
        self.transportStream = transportStream
    }

    /// The context of `tag`: its PTS, origin, wall-clock time and place in a transport stream.
    public init(_ tag: TimedTag) {
        self.init(pts: tag.pts, origin: tag.origin, programDateTime: tag.programDateTime, transportStream: tag.transportStream)
    }
}

/// The Nielsen App SDK's metering API, as a DTVR player calls it. `sendID3` also receives the
/// tag's context, which an adapter to the real SDK ignores and the reference engine records.
///
/// Calls come one at a time, in order, from the session's task, each awaited before the next;
/// the requirements are `async` so that an `actor` conforms as it is, and a `Sendable` class
/// with synchronous methods does too.
public protocol MeteringEngine: Sendable {
    /// Starts a viewing session on a channel.
    func play(channelName: String) async
    /// Content metadata as JSON, for DTVR `{"type":"content","adModel":"1"|"2"}`.
    func loadMetadata(_ json: String) async
    /// Hands over one Nielsen tag (the PRIV owner string) as the playhead reaches it.
    func sendID3(_ payload: String, context: TagContext) async
    /// Called once a second while playing, in seconds.
    func playheadPosition(_ position: Int64) async
    /// Playback paused or left the channel; `play` starts it again.
    func stop() async
    /// The session is over: the last call it gets.
    func end() async
}
