import ID3MeterCore

/// What the report reads of one channel for one day, from the collector's database or from
/// record files: its coverage by hour, the minutes its gaps' causes need, and its other records.
package struct ChannelDayInput: Sendable {
    package var channel: String
    /// `YYYY-MM-DD` and the day's bounds (Unix seconds) in the report's time zone.
    package var day: String
    package var dayStart: Double
    package var dayEnd: Double
    /// When the channel was on air within the day, or `nil` when it was not.
    package var onAir: Range<Double>?
    /// The hours from the minute before the day to the minute after it, in order: each folded
    /// from those minutes alone, counting those on air (`CoverageHour.init(hour:minutes:counted:onAir:)`),
    /// or the collector's stored one for an hour wholly on air.
    package var hours: [CoverageHour]
    /// Each meter's minutes, by minute, that the day's gaps overlap (more may be given): what
    /// the causes of a gap read.
    package var minutes: [String: [CoverageMinute]]
    /// The channel's records other than deliveries (alerts, events, resumes, losses, warnings),
    /// in the order they were made, from `notableSince` to the day's end.
    package var notable: [MeterRecord]
    package var notableSince: Double
    /// The alerts of `notable` as spans (`AlertSpans.asOf`, at the day's end).
    package var alerts: AlertSpans

    package init(channel: String, day: String, dayStart: Double, dayEnd: Double, onAir: Range<Double>?,
                 hours: [CoverageHour], minutes: [String: [CoverageMinute]], notable: [MeterRecord], notableSince: Double, alerts: AlertSpans) {
        (self.channel, self.day, self.dayStart, self.dayEnd, self.onAir) = (channel, day, dayStart, dayEnd, onAir)
        (self.hours, self.minutes, self.notable, self.notableSince, self.alerts) = (hours, minutes, notable, notableSince, alerts)
    }

    /// How far before a day its alerts are looked for: one that started earlier and is still
    /// open is known from its start record.
    package static let notableLookback = 7 * 86_400.0
}
