/// The payload of one timed-ID3 access unit, as the demuxer hands it over.
public struct TimedID3Packet: Sendable {
    public var bytes: [UInt8]
    /// 90 kHz ticks, 33 bits, as carried in the stream; `nil` when the packet has none.
    public var pts: Int64?
    /// Same clock; timed ID3 rarely carries a DTS, and libavformat then repeats the PTS.
    public var dts: Int64?
    public var streamIndex: Int
    /// Where the packet starts in its file, when known.
    public var position: Int64?

    public init(bytes: [UInt8], pts: Int64?, dts: Int64?, streamIndex: Int, position: Int64? = nil) {
        self.bytes = bytes
        self.pts = pts
        self.dts = dts
        self.streamIndex = streamIndex
        self.position = position
    }
}
