import FoundationEssentials

/// `EXT-X-PROGRAM-DATE-TIME` values: ISO 8601 with a time zone, fractional seconds optional.
/// Parsed with Foundation's own ISO 8601 style, not ICU's date formatter, which traps (SIGFPE)
/// on some malformed dates a fuzzer found (fuzz/regressions/playlist).
package enum ProgramDateTime {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// 1970-01-01 to 9999-12-31: what a date on a stream's wall clock can be, and what the
    /// formatter can print back.
    static let range = Date(timeIntervalSince1970: 0)...Date(timeIntervalSince1970: 253_402_300_799.999)

    /// An ISO 8601 date and time with its time zone, within `range`; `nil` otherwise.
    public static func parse(_ text: Substring) -> Date? {
        (try? Date(String(text), strategy: Date.ISO8601FormatStyle())).flatMap { range.contains($0) ? $0 : nil }
    }

    /// To the nearest millisecond: the style truncates, so half a millisecond more rounds
    /// (52.0119999 prints .012, not .011).
    public static func format(_ date: Date) -> String {
        style.format(date.addingTimeInterval(0.000_5))
    }
}
