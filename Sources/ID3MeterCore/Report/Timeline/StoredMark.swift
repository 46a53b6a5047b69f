/// A timeline's mark as a recorder keeps it: its place, kind and PTS in 16 bytes, where a
/// `TagTimeline.Mark` takes 40. A live channel keeps an hour of marks, 3,600 at a tag a second,
/// for each channel of a line-up; their details (the latest few) are kept apart.
struct StoredMark: Sendable {
    var t: Double
    /// The kind (bits 62-63), whether there is a PTS (bit 61), and the PTS plus `ptsBias` (bits 0-60).
    private var bits: UInt64

    /// PTS are kept from -2^60 to 2^60 ticks (400,000 years of the 90 kHz clock); one outside
    /// (only a hostile stream's) is kept at the nearest end.
    private static let ptsBias: Int64 = 1 << 60
    private static let ptsMask: UInt64 = (1 << 61) - 1
    private static let hasPTS: UInt64 = 1 << 61

    init(t: Double, kind: TagTimeline.Kind, pts: Int64?) {
        self.t = t
        let kindBits = UInt64(TagTimeline.Kind.allCases.firstIndex(of: kind)!) << 62
        guard let pts else {
            bits = kindBits
            return
        }
        let kept = Swift.min(Swift.max(pts, -Self.ptsBias), Self.ptsBias - 1)
        bits = kindBits | Self.hasPTS | UInt64(kept + Self.ptsBias)
    }

    var kind: TagTimeline.Kind { TagTimeline.Kind.allCases[Int(bits >> 62)] }

    var pts: Int64? { bits & Self.hasPTS == 0 ? nil : Int64(bits & Self.ptsMask) - Self.ptsBias }
}
