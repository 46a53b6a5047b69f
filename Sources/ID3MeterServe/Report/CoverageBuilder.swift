import Foundation
import ID3Meter
import ID3MeterReport

/// Builds the coverage report of `days` from `reading`, a channel at a time: a month of a
/// 300-channel line-up holds one channel's minutes in memory, never the line-up's.
package struct CoverageBuilder: Sendable {
    package var calendar: ReportCalendar
    /// The report's time: a day not over yet is on air until now, not until its end.
    package var now: Double

    package init(calendar: ReportCalendar, now: Double) {
        self.calendar = calendar
        self.now = now
    }

    /// The report of `days` (in order), of `channels` only when given; `progress` hears of each channel done.
    /// Total over any days: one not a day is left out, one not begun at `now` is named as such.
    package func report(days: [String], from reading: some CoverageReading, source: String, channels only: Set<String>? = nil,
                        progress: (Int, Int) -> Void = { _, _ in }) async throws(StoreError) -> CoverageReport {
        let known = days.compactMap { day in calendar.bounds(of: day).map { (day: day, bounds: $0) } }
        let begun = known.filter { $0.bounds.lowerBound < now }
        let notBegun = known.filter { $0.bounds.lowerBound >= now }.map(\.day)
        let all = try await reading.channels()
        let holds = all.map(\.firstAt).min().flatMap { first in
            all.map { max($0.lastAt, $0.deletedAt ?? $0.lastAt) }.max().map { CoverageReport.Holds(first: calendar.day(of: first), last: calendar.day(of: $0)) }
        }
        guard let from = begun.map(\.bounds.lowerBound).min(), let to = begun.map(\.bounds.upperBound).max() else {
            return CoverageReport(generated: calendar.time(now), timeZone: calendar.zone.identifier, days: days, source: source, channels: [],
                                  notBegun: notBegun, holds: holds)
        }
        let channels = all.filter {
            only?.contains($0.channel) ?? true && $0.onAir(within: from..<min(to, now)) != nil
        }
        var results: [ChannelDay] = []
        for (done, span) in channels.enumerated() {
            let minutes = (CoverageMinute.minute(of: from) - 1)..<(CoverageMinute.minute(of: to) + 1)
            let coverage = try await reading.coverage(channel: span.channel, minutes: minutes)
            let notableSince = from - ChannelDayInput.notableLookback
            let notable = try await reading.notable(channel: span.channel, from: notableSince, to: to)
            results += self.days(of: span, begun, coverage: coverage, notable: notable, notableSince: notableSince)
            progress(done + 1, channels.count)
        }
        return CoverageReport(generated: calendar.time(now), timeZone: calendar.zone.identifier, days: days, source: source, channels: results,
                              notBegun: notBegun, holds: holds)
    }

    /// `span`'s days from its coverage and other records over all of them; a day is on air until
    /// `now` at most (none of it when it begins later).
    package func days(of span: ChannelSpan, _ days: [(day: String, bounds: Range<Double>)], coverage: [String: [CoverageMinute]],
                      notable: [MeterRecord], notableSince: Double) -> [ChannelDay] {
        days.map { day, bounds in
            let near = (CoverageMinute.minute(of: bounds.lowerBound) - 1)...(CoverageMinute.minute(of: bounds.upperBound))
            let input = ChannelDayInput(
                channel: span.channel, day: day, dayStart: bounds.lowerBound, dayEnd: bounds.upperBound,
                onAir: span.onAir(within: bounds.lowerBound..<max(bounds.lowerBound, min(bounds.upperBound, now))),
                minutes: coverage.mapValues { Self.slice($0, near) }.filter { !$0.value.isEmpty },
                notable: notable.filter { $0.sentAt < bounds.upperBound }, notableSince: notableSince)
            return ChannelDay(input) { calendar.time($0, of: day, bounds: bounds) }
        }
    }

    /// The minutes (sorted) within `range`, found by bisection.
    private static func slice(_ minutes: [CoverageMinute], _ range: ClosedRange<Int>) -> [CoverageMinute] {
        let start = minutes.partitionPoint { $0.minute >= range.lowerBound }
        let end = minutes.partitionPoint { $0.minute > range.upperBound }
        return Array(minutes[start..<max(start, end)])
    }
}

extension Array {
    /// The first index whose element satisfies `predicate`, which is false then true along the array.
    fileprivate func partitionPoint(_ predicate: (Element) -> Bool) -> Int {
        var (low, high) = (0, count)
        while low < high {
            let middle = (low + high) / 2
            if predicate(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
