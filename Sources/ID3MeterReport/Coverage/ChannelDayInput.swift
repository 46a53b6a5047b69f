import ID3MeterCore

/// What the report reads of one channel for one day, from the collector's database or from
/// record files: its coverage minutes per meter and its other records.
package struct ChannelDayInput: Sendable {
    package var channel: String
    /// `YYYY-MM-DD` and the day's bounds (Unix seconds) in the report's time zone.
    package var day: String
    package var dayStart: Double
    package var dayEnd: Double
    /// When the channel was on air within the day, or `nil` when it was not.
    package var onAir: Range<Double>?
    /// Each meter's minutes, by minute, from the minute before the day to the minute after it.
    package var minutes: [String: [CoverageMinute]]
    /// The channel's records other than deliveries (alerts, events, resumes, losses, warnings),
    /// in the order they were made, from `notableSince` to the day's end.
    package var notable: [MeterRecord]
    package var notableSince: Double

    package init(channel: String, day: String, dayStart: Double, dayEnd: Double, onAir: Range<Double>?,
                 minutes: [String: [CoverageMinute]], notable: [MeterRecord], notableSince: Double) {
        (self.channel, self.day, self.dayStart, self.dayEnd, self.onAir) = (channel, day, dayStart, dayEnd, onAir)
        (self.minutes, self.notable, self.notableSince) = (minutes, notable, notableSince)
    }

    /// How far before a day its alerts are looked for: one that started earlier and is still
    /// open is known from its start record.
    package static let notableLookback = 7 * 86_400.0
}
