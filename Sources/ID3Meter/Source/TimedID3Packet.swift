/// The payload of one timed-ID3 access unit, as the demuxer hands it over.
public struct TimedID3Packet: Sendable {
    public var bytes: [UInt8]
    /// 90 kHz ticks, 33 bits, as carried in the stream; `nil` when the packet has none.
    public var pts: Int64?
    public var streamIndex: Int

    public init(bytes: [UInt8], pts: Int64?, streamIndex: Int) {
        self.bytes = bytes
        self.pts = pts
        self.streamIndex = streamIndex
    }
}
