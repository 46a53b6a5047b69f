import Foundation
import ID3MeterCore

extension ChannelDay {
    /// The channel's day from what its meters recorded. `time` writes a Unix time in the report's zone.
    package init(_ input: ChannelDayInput, time: (Double) -> String) {
        day = input.day
        channel = input.channel
        let firstMinute = CoverageMinute.minute(of: input.dayStart)
        let dayMinutes = CoverageMinute.minute(of: input.dayEnd) - firstMinute
        guard let onAir = input.onAir, onAir.lowerBound < onAir.upperBound else {
            (onAirMinutes, creditedMinutes, gaps, tags, info, failingChecks, meters) = (0, 0, [], TagCounts(), InfoCadence(), [], [])
            strip = dayMinutes > 0 ? [Run(state: .offAir, minute: 0, minutes: dayMinutes)] : []
            return
        }
        (onAirFrom, onAirTo) = (time(onAir.lowerBound), time(onAir.upperBound))
        let airMinutes = Self.airMinutes(onAir)
        onAirMinutes = airMinutes.count

        // Minutes credited, by whom: bits of each hour.
        let hours = input.hours
        tags = hours.reduce(into: TagCounts()) { sum, hour in
            sum.creditable += hour.tags.creditable
            sum.info += hour.tags.info
            sum.placeholder += hour.tags.placeholder
            sum.invalid += hour.tags.invalid
        }
        creditedMinutes = hours.reduce(0) { $0 + $1.credited.nonzeroBitCount }
        let names = Set(hours.flatMap { $0.meters.map(\.meter) }).sorted()
        meters = names.map { meter in
            var part = MeterPart(meter: meter, creditedMinutes: 0, creditableTags: 0, soleMinutes: 0)
            for hour in hours {
                guard let mine = hour.meters.first(where: { $0.meter == meter }) else { continue }
                let others = hour.meters.reduce(UInt64(0)) { $1.meter == meter ? $0 : $0 | $1.credited }
                part.creditedMinutes += mine.credited.nonzeroBitCount
                part.creditableTags += mine.creditable
                part.soleMinutes += (mine.credited & ~others).nonzeroBitCount
            }
            return part
        }
        strip = Self.runs(dayMinutes: dayMinutes, firstMinute: firstMinute, airMinutes: airMinutes, hours: hours)

        // Gaps: the stretches on air that no meter's creditable tags cover.
        let alerts = input.alerts
        gaps = Self.gaps(hours, onAir: onAir).map { gap in
            Gap(from: time(gap.lowerBound), to: time(gap.upperBound), seconds: Int((gap.upperBound - gap.lowerBound).rounded()),
                causes: Self.causes(gap.lowerBound, gap.upperBound, afterTags: gap.lowerBound > onAir.lowerBound, input: input, alerts: alerts, time: time),
                start: gap.lowerBound)
        }

        info = Self.infoCadence(hours, onAir: onAir)
        info.tags = tags.info
        failingChecks = Self.failingChecks(alerts, onAir: onAir)
    }

    /// The minutes a day on air for `onAir` counts: those it touches.
    package static func airMinutes(_ onAir: Range<Double>) -> Range<Int> {
        CoverageMinute.minute(of: onAir.lowerBound)..<Int((onAir.upperBound / 60).rounded(.up))
    }

    /// A meter's covered stretches, in order: its minutes' own, joined across minutes when the
    /// last tag of one and the first of the next are closer than a gap.
    package static func stretches(_ minutes: [CoverageMinute]) -> [ClosedRange<Double>] {
        union([minutes.flatMap(\.covered)], threshold: CoverageMinute.gapThreshold)
    }

    /// The stretches of `onAir`, of a gap or more, that no meter's creditable tags cover: where
    /// the report looks for causes (and a database report reads the minutes they overlap).
    package static func gaps(_ hours: [CoverageHour], onAir: Range<Double>) -> [Range<Double>] {
        let threshold = CoverageMinute.gapThreshold
        var found: [Range<Double>] = []
        var position = onAir.lowerBound
        func gap(to end: Double) {
            if end - position >= threshold { found.append(position..<end) }
        }
        for stretch in union(hours.map(\.covered), threshold: threshold) where stretch.upperBound > position {
            guard stretch.lowerBound < onAir.upperBound else { break }
            if stretch.lowerBound > position { gap(to: stretch.lowerBound) }
            position = max(position, stretch.upperBound)
        }
        if position < onAir.upperBound { gap(to: onAir.upperBound) }
        return found
    }

    /// Stretches from several lists, merged where less than `threshold` lies between them.
    static func union(_ lists: [[ClosedRange<Double>]], threshold: Double) -> [ClosedRange<Double>] {
        var merged: [ClosedRange<Double>] = []
        for stretch in lists.joined().sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, stretch.lowerBound - last.upperBound < threshold {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, stretch.upperBound)
            } else {
                merged.append(stretch)
            }
        }
        return merged
    }

    private static func runs(dayMinutes: Int, firstMinute: Int, airMinutes: Range<Int>, hours: [CoverageHour]) -> [Run] {
        // Each hour's bits by its place from the day's first hour: the day's minutes read in turn.
        let firstHour = CoverageHour.hour(of: firstMinute)
        var credited = [UInt64](repeating: 0, count: max(0, CoverageHour.hour(of: firstMinute + max(dayMinutes, 1) - 1) - firstHour + 1))
        for hour in hours where credited.indices.contains(hour.hour - firstHour) { credited[hour.hour - firstHour] |= hour.credited }
        var runs: [Run] = []
        func add(_ state: Run.State, at offset: Int, minutes: Int) {
            if let last = runs.last, last.state == state {
                runs[runs.count - 1].minutes += minutes
            } else {
                runs.append(Run(state: state, minute: offset, minutes: minutes))
            }
        }
        var offset = 0
        while offset < dayMinutes {
            let minute = firstMinute + offset
            let hour = CoverageHour.hour(of: minute)
            // The rest of this hour within the day: one state when it is all on air and its
            // bits all alike (most hours), else minute by minute.
            let count = min(hour * 60 + 60, firstMinute + dayMinutes) - minute
            let bits = credited[hour - firstHour] >> UInt64(minute - hour * 60) & (count == 64 ? ~0 : (UInt64(1) << UInt64(count)) - 1)
            if airMinutes.contains(minute), airMinutes.contains(minute + count - 1), bits == 0 || bits.nonzeroBitCount == count {
                add(bits == 0 ? .uncredited : .credited, at: offset, minutes: count)
            } else {
                for step in 0..<count {
                    let state: Run.State = !airMinutes.contains(minute + step) ? .offAir : bits & (UInt64(1) << UInt64(step)) != 0 ? .credited : .uncredited
                    add(state, at: offset + step, minutes: 1)
                }
            }
            offset += count
        }
        return runs
    }

    /// What the records say of `from..<to`, the likeliest first.
    /// `afterTags`: the gap follows tags delivered (it does not open the day's air).
    private static func causes(_ from: Double, _ to: Double, afterTags: Bool, input: ChannelDayInput, alerts: AlertSpans,
                               time: (Double) -> String) -> [Cause] {
        var causes: [Cause] = []
        func add(_ kind: GapCause, _ detail: String, _ meters: [String]) {
            causes.append(Cause(kind: kind, detail: detail, meters: Array(Set(meters)).sorted()))
        }
        let inside = input.notable.filter { $0.sentAt > from && $0.sentAt < to }
        for record in input.notable {
            guard case .loss(let loss) = record.content, loss.from < to, loss.to > from else { continue }
            add(.recordsLost, "\(loss.records) records made \(time(loss.from)) to \(time(loss.to)) dropped by output \(loss.output)",
                [record.meter ?? ""])
        }
        let openAlerts = alerts.spans.filter { $0.from < to && $0.to > from }
        // Its minutes: those it overlaps (their placeholder and invalid tags are counted), and
        // those wholly inside it, whose tags of any kind are signs of a meter at work.
        let tagsInside = input.minutes.values.joined().filter { Double($0.minute * 60 + 60) > from && Double($0.minute * 60) < to }
        let signsOfLife = tagsInside.contains { minute in
            let wholly = Double(minute.minute * 60) >= from && Double(minute.minute * 60 + 60) <= to
            let info = [minute.infoFirst, minute.infoLast].contains { $0.map { $0 > from && $0 < to } ?? false }
            return info || (wholly && minute.placeholder + minute.invalid > 0)
        }
        if inside.isEmpty, openAlerts.isEmpty, !signsOfLife {
            add(.silent, "no meter sent a record from \(time(from)) to \(time(to))", [])
        }
        // An alert no record ended (its meter stopped, or the records stop): said, not hidden.
        func still(_ spans: [AlertSpans.Span]) -> String {
            spans.contains { $0.to == .infinity } ? " (still open when the records end)" : ""
        }
        func alert(_ name: String, _ kind: GapCause, _ words: String) {
            let spans = alerts.overlapping(name, from, to)
            guard !spans.isEmpty else { return }
            add(kind, (spans.compactMap(\.message).first ?? words) + still(spans), spans.map(\.meter))
        }
        // A fault the meters recorded fetch by fetch (`segment_failed`, `playlist_failed`): how
        // many, and why, in the gap; else the alert's words, from a meter that wrote no such records.
        func fetches(_ name: String, _ kind: GapCause, what: String, _ counted: (MeterRecord.FetchFailure) -> Bool) {
            let failed = inside.compactMap { record in
                if case .fetchFailure(let failure) = record.content, counted(failure) { (record, failure) } else { nil }
            }
            guard let first = failed.first else { return alert(name, kind, what) }
            let reasons = Dictionary(grouping: failed) { $0.1.status.map { "HTTP \($0)" } ?? $0.1.reason }
                .map { "\($0.key) ×\($0.value.count)" }.sorted()
            add(kind, "\(failed.count) \(what) (\(reasons.joined(separator: ", "))) from \(time(first.0.sentAt))", failed.compactMap(\.0.meter))
        }
        // Segments whose bytes came and did not parse: the stream is unreadable, not unreachable.
        let unparsed = { (failure: MeterRecord.FetchFailure) in failure.resource == .segment && failure.reason == "unreadable" }
        fetches("stream_unreadable", .streamUnreadable, what: "segments' bytes did not parse") { unparsed($0) }
        fetches("playlist_unreachable", .playlistUnreachable, what: "reloads of the playlist failed") { $0.resource == .playlist }
        alert("playlist_stale", .playlistStale, "the playlist stopped advancing")
        fetches("segments_failing", .segmentsFailing, what: "segments were given up on") { $0.resource == .segment && !unparsed($0) }
        let uncreditable = tagsInside.reduce(into: TagCounts()) {
            $0.placeholder += $1.placeholder
            $0.info += $1.info
            $0.invalid += $1.invalid
        }
        let uncreditableAlert = alerts.overlapping("only_uncreditable_tags", from, to)
        if !uncreditableAlert.isEmpty || uncreditable.placeholder + uncreditable.invalid > 0 {
            add(.onlyUncreditableTags, "\(uncreditable.placeholder) placeholder-CID, \(uncreditable.invalid) invalid and \(uncreditable.info) INFO tags in its minutes",
                uncreditableAlert.map(\.meter))
        }
        if !causes.contains(where: { [.streamUnreadable, .playlistUnreachable, .playlistStale, .segmentsFailing].contains($0.kind) }) {
            let spans = alerts.overlapping("no_tags", from, to)
            if !spans.isEmpty { add(.noTags, "segments came without Nielsen tags" + still(spans), spans.map(\.meter)) }
        }
        alert("on_backup", .failover, "the stream was read from a backup copy")
        for record in inside {
            switch record.content {
            case .event(let event) where event.code == 2002:
                add(.meterRestart, "stopped (2002) at \(time(record.sentAt))", [record.meter ?? ""])
            case .event(let event) where event.code == 2001:
                // A start with no stop of that meter before it, after tags it delivered: it was
                // killed (or its host lost), not stopped.
                let stopped = inside.contains { other in
                    guard case .event(let earlier) = other.content else { return false }
                    return earlier.code == 2002 && other.meter == record.meter && other.sentAt <= record.sentAt
                }
                let abrupt = afterTags && !stopped ? "; it ended before without a stop record (killed, or its host lost)" : ""
                add(.meterRestart, "started (2001) at \(time(record.sentAt))" + abrupt, [record.meter ?? ""])
            case .resume(let resume):
                add(.meterRestart, "resumed at \(time(record.sentAt))" + (resume.lostSeconds.map { ", \(Int($0.rounded())) s of media never read" } ?? ""),
                    [record.meter ?? ""])
            case .warning(let warning):
                add(.warning, warning.message, [record.meter ?? ""])
            default:
                break
            }
        }
        if causes.isEmpty { add(.unexplained, "the meters were running and recorded nothing about it", []) }
        // One line per kind and detail, the likeliest kind first.
        var seen: Set<String> = []
        return causes.filter { seen.insert("\($0.kind)\u{0}\($0.detail)").inserted }.enumerated()
            .sorted { ($0.element.kind, $0.offset) < ($1.element.kind, $1.offset) }.map(\.element)
    }

    private static func infoCadence(_ hours: [CoverageHour], onAir: Range<Double>) -> InfoCadence {
        var joined: CoverageHour.InfoStretch?
        for hour in hours {
            guard let info = hour.info else { continue }
            guard var known = joined else {
                joined = info
                continue
            }
            known.add(info.first...info.last, longest: info.longest, overLimit: info.overLimit)
            joined = known
        }
        var cadence = InfoCadence()
        var longest = 0.0
        var previous = onAir.lowerBound
        if let joined {
            // From the start of the air to the first INFO tag, then what lies between them.
            let first = joined.first - onAir.lowerBound
            longest = max(first, joined.longest)
            cadence.intervalsOverLimit = (first > InfoCadence.limit ? 1 : 0) + joined.overLimit
            previous = joined.last
        }
        let last = onAir.upperBound - previous
        longest = max(longest, last)
        if last > InfoCadence.limit { cadence.intervalsOverLimit += 1 }
        cadence.longestIntervalSeconds = longest > 60 ? Int(longest.rounded()) : nil
        return cadence
    }

    /// Each check named by a `failing_checks` alert, with the seconds on air it was failing by
    /// any meter's account.
    private static func failingChecks(_ alerts: AlertSpans, onAir: Range<Double>) -> [FailingCheck] {
        var spans: [String: [ClosedRange<Double>]] = [:]
        var details: [String: (from: Double, words: String)] = [:]
        let prefix = "failing the QA checks "
        for span in alerts.spans {
            let from = max(span.from, onAir.lowerBound), to = min(span.to, onAir.upperBound)
            guard from < to else { continue }
            switch (span.name, span.message) {
            case ("failing_checks", let message?) where message.hasPrefix(prefix):
                for check in message.dropFirst(prefix.count).split(separator: ", ") { spans[String(check), default: []].append(from...to) }
            case ("renditions_differ", let message):
                // An audit's alert: the QA check `renditions`, its words naming the renditions at fault.
                spans[QAReport.renditionsCheck, default: []].append(from...to)
                if let message, details[QAReport.renditionsCheck].map({ $0.from <= from }) ?? true {
                    details[QAReport.renditionsCheck] = (from, message)
                }
            default:
                continue
            }
        }
        return spans.map { check, list in
            FailingCheck(check: check, seconds: Int(union([list], threshold: 0).reduce(0) { $0 + $1.upperBound - $1.lowerBound }.rounded()),
                         detail: details[check]?.words)
        }.sorted { ($0.seconds, $1.check) > ($1.seconds, $0.check) }
    }
}
