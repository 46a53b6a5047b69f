/// The bytes of one timed-ID3 access unit, as the demuxer hands them over: normally one PES
/// payload, or the PES payloads joined into one tag.
public struct TimedID3Packet: Sendable {
    public var bytes: [UInt8]
    /// 90 kHz ticks, 33 bits, as carried in the stream; `nil` when no PES on the PID had one.
    public var pts: Int64?
    public var pid: Int
    /// Where the packet's first PES starts in its input.
    public var position: Int64
    /// The caller's label for the bytes it started in (an HLS segment).
    public var unit: Int
    /// What was unusual about the way it was carried, for the tags' notes.
    public var notes: [String]
}
