/// MPEG-TS presentation timestamps are 33-bit counts of a 90 kHz clock (ISO/IEC 13818-1 §2.4.3.7).
package enum PTS {
    /// Ticks per second.
    public static let clockRate: Int64 = 90_000
    /// A PTS is 33 bits: it wraps about every 26.5 hours.
    public static let wrap: Int64 = 1 << 33

    /// libavformat unwraps timestamps within one input; this puts them back as carried.
    public static func asCarried(_ ticks: Int64) -> Int64 { ticks & (wrap - 1) }

    /// 90 kHz ticks in seconds.
    public static func seconds(_ ticks: Int64) -> Double { Double(ticks) / Double(clockRate) }

    /// Whether `a` comes before `b` on the 33-bit circle (the shorter way round).
    static func isBefore(_ a: Int64, _ b: Int64) -> Bool { distance(from: a, to: b) > 0 }

    /// The PTS of the PES header at the start of `bytes` (its start code first), when it has one
    /// (§2.4.3.6-7: the PTS_DTS_flags, then the 5-byte field with its marker bits).
    static func inPESHeader<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> Int64? where Bytes.Index == Int {
        let start = bytes.startIndex
        guard bytes.count >= 14, bytes[start] == 0, bytes[start + 1] == 0, bytes[start + 2] == 1,
              bytes[start + 6] & 0xC0 == 0x80, bytes[start + 7] & 0x80 != 0, bytes[start + 8] >= 5 else { return nil }
        func byte(_ index: Int) -> Int64 { Int64(bytes[start + index]) }
        return (byte(9) & 0x0E) << 29 | byte(10) << 22 | (byte(11) & 0xFE) << 14 | byte(12) << 7 | byte(13) >> 1
    }

    /// Ticks from `a` to `b`, taking the shorter way round the 33-bit wrap.
    public static func distance(from a: Int64, to b: Int64) -> Int64 {
        var delta = (b - a) % wrap
        if delta > wrap / 2 { delta -= wrap } else if delta < -wrap / 2 { delta += wrap }
        return delta
    }
}
