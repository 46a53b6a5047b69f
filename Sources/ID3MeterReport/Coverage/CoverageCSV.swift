extension CoverageReport {
    /// One row per channel and day (RFC 4180), for a spreadsheet or a backend.
    package func daysCSV() -> String {
        var lines = ["day,channel,on_air_minutes,credited_minutes,credited_percent,gaps,gap_seconds,longest_gap_seconds,"
            + "first_cause_of_longest_gap,creditable_tags,placeholder_tags,invalid_tags,info_tags,longest_info_interval_seconds,"
            + "failing_checks,meters"]
        for day in channels {
            let longest = day.gaps.max { $0.seconds < $1.seconds }
            let fields: [String] = [
                day.day, day.channel, "\(day.onAirMinutes)", "\(day.creditedMinutes)", "\(day.creditedPercent)", "\(day.gaps.count)",
                "\(day.gapSeconds)", longest.map { "\($0.seconds)" } ?? "", longest?.causes.first?.kind.rawValue ?? "",
                "\(day.tags.creditable)", "\(day.tags.placeholder)", "\(day.tags.invalid)", "\(day.info.tags)",
                day.info.longestIntervalSeconds.map { "\($0)" } ?? "", day.failingChecks.map(\.check).joined(separator: " "),
                day.meters.map(\.meter).joined(separator: " "),
            ]
            lines.append(fields.map(Self.csvField).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// One row per gap, the longest first: when, how long, and each cause the records give.
    package func gapsCSV() -> String {
        var lines = ["day,channel,from,to,seconds,causes,details,meters"]
        for (channel, day, gap) in worstGaps {
            let fields = [day, channel, gap.from, gap.to, "\(gap.seconds)", gap.causes.map(\.kind.rawValue).joined(separator: " "),
                          gap.causes.map(\.detail).joined(separator: "; "), Array(Set(gap.causes.flatMap(\.meters))).sorted().joined(separator: " ")]
            lines.append(fields.map(Self.csvField).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// A field quoted when it must be; one starting like a formula is quoted and prefixed with
    /// `'`, so that a channel named `=cmd()` is not run by a spreadsheet.
    static func csvField(_ field: String) -> String {
        var field = field
        if let first = field.first, "=+-@\t\r".contains(first), Double(field) == nil { field = "'" + field }
        guard field.contains(where: { ",\"\r\n".contains($0) }) || field.hasPrefix("'") else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
