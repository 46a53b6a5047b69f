import Foundation
import ID3MeterCore
import Synchronization

/// `id3-meter report`: each channel's days, from the records its meters posted. The JSON form is
/// this type's encoding; `csv` and `html` are read from it.
package struct CoverageReport: Codable, Sendable {
    package var generated: String
    package var timeZone: String
    /// The days reported, `YYYY-MM-DD`, in order.
    package var days: [String]
    /// Where the records came from: the database, or the record files.
    package var source: String
    package var channels: [ChannelDay]
    /// The days asked for that had not begun when the report was made: nothing of them is
    /// reported (a daily job's date taken in another zone meets one).
    package var notBegun: [String]
    /// The first and last days the source holds records of (`nil`: none): said when the days
    /// asked for have no channel on air, so that an empty report says where the records are.
    package var holds: Holds?

    package struct Holds: Codable, Sendable, Equatable {
        package var first: String
        package var last: String

        package init(first: String, last: String) { (self.first, self.last) = (first, last) }
    }

    package init(generated: String, timeZone: String, days: [String], source: String, channels: [ChannelDay], notBegun: [String] = [],
                 holds: Holds? = nil) {
        (self.generated, self.timeZone, self.days, self.source, self.channels) = (generated, timeZone, days, source, channels)
        (self.notBegun, self.holds) = (notBegun, holds)
    }

    enum CodingKeys: String, CodingKey {
        case generated, timeZone = "time_zone", days, source, channels, notBegun = "not_begun", holds = "source_holds"
    }

    /// The gaps of every channel and day, the longest first.
    package var worstGaps: [(channel: String, day: String, gap: ChannelDay.Gap)] {
        channels.flatMap { day in day.gaps.map { (day.channel, day.day, $0) } }
            .sorted { ($0.gap.seconds, $1.channel, $1.gap.start) > ($1.gap.seconds, $0.channel, $0.gap.start) }
    }

    /// The report as JSON: the encoder's bytes, its channels' days written on every core
    /// (`ChannelDayJSON`: a fleet's month is 300,000 of them). Keys are sorted, so `channels`
    /// comes first: the rest is encoded around an empty list and the days put in it.
    package func json() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var rest = self
        rest.channels = []
        guard let outer = try? encoder.encode(rest), outer.starts(with: Data(#"{"channels":[]"#.utf8)) else { return Data("{}".utf8) }
        let parts = Swift.max(1, Swift.min(ProcessInfo.processInfo.activeProcessorCount * 4, channels.count / 64))
        let chunk = (channels.count + parts - 1) / Swift.max(parts, 1)
        let encoded = Mutex([[UInt8]?](repeating: nil, count: parts))
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let slice = channels[Swift.min(part * chunk, channels.count)..<Swift.min((part + 1) * chunk, channels.count)]
            var bytes: [UInt8] = []
            JSONLine.writeArray(appendingTo: &bytes, slice) { line, day in day.write(&line) }
            encoded.withLock { $0[part] = bytes }
        }
        var json = Data(#"{"channels":["#.utf8)
        var first = true
        for data in encoded.withLock({ $0 }) {
            // Each part is `[...]`: its elements go in as they are.
            guard let data, data.count > 2 else { continue }
            if !first { json.append(UInt8(ascii: ",")) }
            json.append(contentsOf: data.dropFirst().dropLast())
            first = false
        }
        json.append(outer.dropFirst(#"{"channels":["#.utf8.count))
        return json
    }
}

/// Days and times in the operator's zone.
package struct ReportCalendar: Sendable {
    package let zone: TimeZone
    private let calendar: Calendar

    package init(zone: TimeZone) {
        self.zone = zone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        self.calendar = calendar
    }

    /// The years a day may be in: those `YYYY` writes, in the Gregorian calendar's era.
    package static let years = 1...9_999

    /// `day` (`YYYY-MM-DD`) as Unix seconds from its start to the next day's: 23 or 25 hours
    /// on the days the clocks change.
    package func bounds(of day: String) -> Range<Double>? {
        let parts = day.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, Self.years.contains(parts[0]), let start = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])),
              let end = calendar.date(byAdding: .day, value: 1, to: start), self.day(of: start.timeIntervalSince1970) == day
        else { return nil }
        return start.timeIntervalSince1970..<end.timeIntervalSince1970
    }

    package func day(of time: Double) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: time))
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    /// The `count` days ending with `last`, in order; `nil` when one of them is not a day
    /// (before the year 1: the calendar's era would start again).
    package func days(ending last: String, count: Int) -> [String]? {
        guard let end = bounds(of: last) else { return nil }
        let days = (0..<count).reversed().map { back in day(of: end.lowerBound - Double(back) * 86_400 + 3_600 * 12) }
        let starts = days.compactMap { bounds(of: $0)?.lowerBound }
        guard starts.count == days.count, zip(starts, starts.dropFirst()).allSatisfy({ $0 < $1 }) else { return nil }
        return days
    }

    /// `time` as a time of `day`, whose end (`bounds.upperBound`) is `24:00:00` of it (ISO
    /// 8601's end of a day), not the next day's midnight: a gap to the end of the day stays in it.
    package func time(_ time: Double, of day: String, bounds: Range<Double>) -> String {
        guard time == bounds.upperBound else { return self.time(time) }
        let before = self.time(bounds.upperBound - 1)
        return day + "T24:00:00" + before.dropFirst(19)
    }

    /// `time` as ISO 8601 in the zone, to the second: `2026-11-20T14:03:07+01:00`.
    package func time(_ time: Double) -> String {
        let date = Date(timeIntervalSince1970: time.rounded(.down))
        let offset = zone.secondsFromGMT(for: date)
        let fields: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)
        if CoverageMinute.times.contains(time) {
            // The coverage's times (1970 to 2100), a month's report writes millions: the
            // Gregorian calendar's arithmetic on the zone's local seconds, not Calendar's.
            let local = Int(time.rounded(.down)) + offset
            let (days, seconds) = local.quotientAndRemainder(dividingBy: 86_400)
            let civil = Self.civil(fromDays: days - (seconds < 0 ? 1 : 0))
            let second = (seconds + 86_400) % 86_400
            fields = (civil.year, civil.month, civil.day, second / 3_600, second % 3_600 / 60, second % 60)
        } else {
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            fields = (parts.year ?? 0, parts.month ?? 0, parts.day ?? 0, parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
        }
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        let year = String(fields.year)
        return String(repeating: "0", count: max(0, 4 - year.count)) + year + "-" + two(fields.month) + "-" + two(fields.day) + "T" + two(fields.hour)
            + ":" + two(fields.minute) + ":" + two(fields.second) + (offset < 0 ? "-" : "+") + two(abs(offset) / 3_600) + ":" + two(abs(offset) % 3_600 / 60)
    }

    /// The Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
    package static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
