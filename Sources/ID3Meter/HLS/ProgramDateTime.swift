import Foundation

/// `EXT-X-PROGRAM-DATE-TIME` values: ISO 8601 with a time zone, fractional seconds optional.
public enum ProgramDateTime {
    public static func parse(_ text: Substring) -> Date? {
        let value = String(text)
        let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = withFraction.date(from: value) { return date }
        return ISO8601DateFormatter().date(from: value)
    }

    public static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
