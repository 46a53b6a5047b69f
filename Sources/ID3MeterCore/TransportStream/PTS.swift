/// MPEG-TS presentation timestamps are 33-bit counts of a 90 kHz clock (ISO/IEC 13818-1 §2.4.3.7).
public enum PTS {
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

    /// Ticks from `a` to `b`, taking the shorter way round the 33-bit wrap.
    public static func distance(from a: Int64, to b: Int64) -> Int64 {
        var delta = (b - a) % wrap
        if delta > wrap / 2 { delta -= wrap } else if delta < -wrap / 2 { delta += wrap }
        return delta
    }
}
