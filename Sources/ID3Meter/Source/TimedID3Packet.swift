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

/// MPEG-TS presentation timestamps are 33-bit counts of a 90 kHz clock (ISO/IEC 13818-1 §2.4.3.7).
public enum PTS {
    public static let clockRate: Int64 = 90_000
    public static let wrap: Int64 = 1 << 33

    /// libavformat unwraps timestamps within one input; this puts them back as carried.
    public static func asCarried(_ ticks: Int64) -> Int64 { ticks & (wrap - 1) }

    public static func seconds(_ ticks: Int64) -> Double { Double(ticks) / Double(clockRate) }
}
