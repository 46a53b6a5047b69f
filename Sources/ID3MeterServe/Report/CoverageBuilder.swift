import Foundation
import ID3Meter
import ID3MeterReport

/// Builds the coverage report of `days` from `reading`, a few channels at a time: a month of a
/// line-up holds those channels' hours and minutes in memory, never the line-up's.
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
        // A few channels at a time: one's reads wait on the database while another's days are made.
        var results = [[ChannelDay]](repeating: [], count: channels.count)
        do {
            try await withThrowingTaskGroup(of: (Int, [ChannelDay]).self) { group in
                var next = channels.startIndex
                func start() {
                    guard next < channels.endIndex else { return }
                    let (index, span) = (next, channels[next])
                    group.addTask { (index, try await self.days(of: span, begun, from: from, to: to, reading: reading)) }
                    next += 1
                }
                for _ in 0..<Self.channelsAtOnce { start() }
                var done = 0
                while let (index, days) = try await group.next() {
                    results[index] = days
                    done += 1
                    progress(done, channels.count)
                    start()
                }
            }
        } catch {
            throw error as? StoreError ?? StoreError("\(error)")
        }
        return CoverageReport(generated: calendar.time(now), timeZone: calendar.zone.identifier, days: days, source: source,
                              channels: Array(results.joined()), notBegun: notBegun, holds: holds)
    }

    /// Channels read and reported at once: enough to keep the database and this process busy
    /// together, a few channels' months in memory.
    static let channelsAtOnce = 4

    /// `span`'s days, read from `reading`: the collector's stored hours where an hour is wholly
    /// on air, the minutes of every other hour, then the minutes the gaps found overlap.
    private func days(of span: ChannelSpan, _ days: [(day: String, bounds: Range<Double>)], from: Double, to: Double,
                      reading: some CoverageReading) async throws(StoreError) -> [ChannelDay] {
        let all = (CoverageMinute.minute(of: from) - 1)..<(CoverageMinute.minute(of: to) + 1)
        let stored = try await reading.hours(channel: span.channel,
                                             hours: CoverageHour.hour(of: all.lowerBound)..<(CoverageHour.hour(of: all.upperBound - 1) + 1))
        var read = RangeSet<Int>()
        var coverage: [String: [CoverageMinute]] = [:]
        // One read a round, of the ranges not read yet.
        func fetch(_ wanted: RangeSet<Int>) async throws(StoreError) {
            let ranges = Array(wanted.subtracting(read).ranges)
            guard !ranges.isEmpty else { return }
            for (meter, minutes) in try await reading.coverage(channel: span.channel, minutes: ranges) {
                coverage[meter] = ((coverage[meter] ?? []) + minutes).sorted { $0.minute < $1.minute }
            }
            read.formUnion(wanted)
        }
        // First every minute a day folds itself, then those its gaps overlap.
        var wanted = RangeSet<Int>()
        for (_, bounds) in days {
            guard let onAir = self.onAir(of: span, bounds) else { continue }
            for (hour, minutes) in Self.hours(reach: Self.reach(bounds, onAir: onAir)) where !Self.uses(stored[hour], hour, onAir: onAir) {
                wanted.insert(contentsOf: minutes)
            }
        }
        try await fetch(wanted)
        // The days' hours, final now: the gaps' minutes read next lie in stored hours.
        let hours = days.map { _, bounds in
            onAir(of: span, bounds).map { self.hours(reach: Self.reach(bounds, onAir: $0), onAir: $0, coverage: coverage, stored: stored) } ?? []
        }
        wanted = RangeSet<Int>()
        for ((_, bounds), hours) in zip(days, hours) {
            guard let onAir = self.onAir(of: span, bounds) else { continue }
            let reach = Self.reach(bounds, onAir: onAir)
            for gap in ChannelDay.gaps(hours, onAir: onAir) {
                let minutes = CoverageMinute.minute(of: gap.lowerBound)...CoverageMinute.minute(of: gap.upperBound)
                wanted.insert(contentsOf: max(minutes.lowerBound, reach.lowerBound)..<(min(minutes.upperBound, reach.upperBound) + 1))
            }
        }
        try await fetch(wanted)
        let notableSince = from - ChannelDayInput.notableLookback
        let notable = try await reading.notable(channel: span.channel, from: notableSince, to: to)
        let alerts = AlertSpans.asOf(notable, since: notableSince, ends: days.map(\.bounds.upperBound))
        return zip(days, zip(hours, alerts)).map { day, parts in
            self.day(of: span, day, hours: parts.0, alerts: parts.1, coverage: coverage, notable: notable, notableSince: notableSince)
        }
    }

    /// `span`'s days from its coverage (the collector's stored hours, and each meter's minutes
    /// sorted) and other records over all of them (in the order they were made); a day is on air until `now` at most (none of
    /// it when it begins later).
    package func days(of span: ChannelSpan, _ days: [(day: String, bounds: Range<Double>)], coverage: [String: [CoverageMinute]],
                      stored: [Int: CoverageHour] = [:], notable: [MeterRecord], notableSince: Double) -> [ChannelDay] {
        let alerts = AlertSpans.asOf(notable, since: notableSince, ends: days.map(\.bounds.upperBound))
        return zip(days, alerts).map { day, alerts in
            let folded = onAir(of: span, day.bounds).map { self.hours(reach: Self.reach(day.bounds, onAir: $0), onAir: $0, coverage: coverage, stored: stored) }
            return self.day(of: span, day, hours: folded ?? [], alerts: alerts, coverage: coverage, notable: notable, notableSince: notableSince)
        }
    }

    /// `span`'s day of `bounds` from its `hours` (`hours(reach:onAir:coverage:stored:)`), the
    /// minutes its gaps overlap in `coverage`, and its other records.
    private func day(of span: ChannelSpan, _ day: (day: String, bounds: Range<Double>), hours: [CoverageHour], alerts: AlertSpans,
                     coverage: [String: [CoverageMinute]], notable: [MeterRecord], notableSince: Double) -> ChannelDay {
        let bounds = day.bounds
        let onAir = onAir(of: span, bounds)
        let reach = onAir.map { Self.reach(bounds, onAir: $0) }
        let input = ChannelDayInput(
            channel: span.channel, day: day.day, dayStart: bounds.lowerBound, dayEnd: bounds.upperBound, onAir: onAir, hours: hours,
            minutes: reach.map { reach in coverage.mapValues { Self.slice($0, reach) }.filter { !$0.value.isEmpty } } ?? [:],
            // In the order they were made: those before the day's end are a prefix.
            notable: Array(notable[..<notable.partitionPoint { $0.sentAt >= bounds.upperBound }]), notableSince: notableSince, alerts: alerts)
        return ChannelDay(input) { calendar.time($0, of: day.day, bounds: bounds) }
    }

    /// When `span` was on air within a day of `bounds`, until `now` at most.
    private func onAir(of span: ChannelSpan, _ bounds: Range<Double>) -> Range<Double>? {
        span.onAir(within: bounds.lowerBound..<max(bounds.lowerBound, min(bounds.upperBound, now)))
    }

    /// The minutes a day of `bounds` on air for `onAir` reads: from the minute before its air
    /// (a tag there may cover its start) to the minute its air ends in. No minute outside tells
    /// the day anything: a gap is looked for within the air alone.
    private static func reach(_ bounds: Range<Double>, onAir: Range<Double>) -> ClosedRange<Int> {
        max(CoverageMinute.minute(of: bounds.lowerBound), CoverageMinute.minute(of: onAir.lowerBound)) - 1
            ... min(CoverageMinute.minute(of: bounds.upperBound), CoverageMinute.minute(of: onAir.upperBound))
    }

    /// The hours `reach` touches, each with its minutes in `reach`.
    private static func hours(reach: ClosedRange<Int>) -> [(hour: Int, minutes: Range<Int>)] {
        (CoverageHour.hour(of: reach.lowerBound)...CoverageHour.hour(of: reach.upperBound)).map { hour in
            let minutes = CoverageHour.minutes(of: hour)
            return (hour, max(minutes.lowerBound, reach.lowerBound)..<min(minutes.upperBound, reach.upperBound + 1))
        }
    }

    /// Whether a day on air for `onAir` takes `hour` as the collector stored it: only an hour
    /// wholly on air, where folding its minutes would count all of them too.
    private static func uses(_ stored: CoverageHour?, _ hour: Int, onAir: Range<Double>) -> Bool {
        stored != nil && Double(hour * 3_600) >= onAir.lowerBound && Double(hour * 3_600 + 3_600) <= onAir.upperBound
    }

    /// A day's hours: stored where it takes them, else folded from its minutes in `reach`.
    private func hours(reach: ClosedRange<Int>, onAir: Range<Double>, coverage: [String: [CoverageMinute]], stored: [Int: CoverageHour]) -> [CoverageHour] {
        Self.hours(reach: reach).map { hour, minutes in
            if Self.uses(stored[hour], hour, onAir: onAir), let kept = stored[hour] { return kept }
            let inHour = minutes.lowerBound...(minutes.upperBound - 1)
            return CoverageHour(hour: hour, minutes: coverage.mapValues { Self.slice($0, inHour) }.filter { !$0.value.isEmpty },
                                counted: ChannelDay.airMinutes(onAir), onAir: onAir)
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
