import Foundation

/// A channel's day in the coverage report: how much of the time it was on air a viewer could be
/// credited, and every stretch of 30 s or more when none could, with what the records say of it.
/// The JSON form is this type's encoding (docs/REPORT.md names each field).
package struct ChannelDay: Codable, Sendable, Equatable {
    /// The day, `YYYY-MM-DD`, in the report's time zone.
    package var day: String
    package var channel: String
    /// When the channel was on air within the day (ISO 8601 with the zone's offset): from its
    /// first record (or the day's start), to the day's end (or the report's time, or its deletion).
    package var onAirFrom: String?
    package var onAirTo: String?
    package var onAirMinutes: Int
    /// Minutes on air in which some meter delivered a creditable tag.
    package var creditedMinutes: Int
    package var gaps: [Gap]
    package var tags: TagCounts
    package var info: InfoCadence
    /// The QA checks the meters found failing (their `failing_checks` alerts), with how long.
    package var failingChecks: [FailingCheck]
    /// Each meter's part when there are several: what one alone credited is what redundancy saved.
    package var meters: [MeterPart]
    /// The day minute by minute, as runs: what the HTML strip draws.
    package var strip: [Run]

    /// The share of minutes on air that were credited, 0 to 100 (100 with nothing on air).
    package var creditedPercent: Double {
        onAirMinutes == 0 ? 100 : (Double(creditedMinutes) * 100 / Double(onAirMinutes) * 10).rounded(.down) / 10
    }

    /// Seconds on air without a creditable tag, in gaps.
    package var gapSeconds: Int { gaps.reduce(0) { $0 + $1.seconds } }

    package struct Gap: Codable, Sendable, Equatable {
        package var from: String
        package var to: String
        /// Its length, to the second.
        package var seconds: Int
        /// What the records say of it, the likeliest first.
        package var causes: [Cause]
        /// Unix seconds of `from`: for sorting and drawing.
        package var start: Double
    }

    package struct Cause: Codable, Sendable, Equatable {
        package var kind: GapCause
        package var detail: String
        /// The meters whose records say it.
        package var meters: [String]
    }

    package struct TagCounts: Codable, Sendable, Equatable {
        package var creditable = 0, info = 0, placeholder = 0, invalid = 0
    }

    /// Nielsen's Validator expects an INFO tag at least every 310 s (its test 12).
    package struct InfoCadence: Codable, Sendable, Equatable {
        package static let limit = 310.0
        package var tags = 0
        /// The longest interval between consecutive INFO tags over a minute (or from the first
        /// minute on air to the first INFO tag); `nil` when it is a minute or less.
        package var longestIntervalSeconds: Int?
        /// Intervals longer than `limit`.
        package var intervalsOverLimit = 0
    }

    package struct FailingCheck: Codable, Sendable, Equatable {
        package var check: String
        package var seconds: Int
        /// What was wrong, when the alert said more than the check's name (the renditions at
        /// fault, as the day's last audit that found them said).
        package var detail: String?
    }

    package struct MeterPart: Codable, Sendable, Equatable {
        package var meter: String
        package var creditedMinutes: Int
        package var creditableTags: Int
        /// Minutes credited by this meter alone.
        package var soleMinutes: Int
    }

    package struct Run: Codable, Sendable, Equatable {
        package enum State: String, Codable, Sendable { case credited, uncredited, offAir = "off_air" }
        package var state: State
        /// Minutes since the day's start, and how many.
        package var minute: Int
        package var minutes: Int
    }

    enum CodingKeys: String, CodingKey {
        case day, channel, onAirFrom = "on_air_from", onAirTo = "on_air_to", onAirMinutes = "on_air_minutes"
        case creditedMinutes = "credited_minutes", gaps, tags, info, failingChecks = "failing_checks", meters, strip
    }
}

extension ChannelDay.Gap {
    enum CodingKeys: String, CodingKey { case from, to, seconds, causes, start = "start_unix" }
}

extension ChannelDay.InfoCadence {
    enum CodingKeys: String, CodingKey { case tags, longestIntervalSeconds = "longest_interval_seconds", intervalsOverLimit = "intervals_over_310s" }
}

extension ChannelDay.MeterPart {
    enum CodingKeys: String, CodingKey { case meter, creditedMinutes = "credited_minutes", creditableTags = "creditable_tags", soleMinutes = "sole_minutes" }
}
