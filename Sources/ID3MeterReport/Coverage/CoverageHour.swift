/// What every meter's coverage minutes of one channel in one hour tell its day, folded once: a
/// month's report at 10,000 channels reads 7.2 million of these instead of 432 million minutes a
/// meter. The day is composed from its hours (`ChannelDay.init`) whether they were folded from
/// minutes just now or stored by the collector, so both give the same day.
///
/// Why an hour composes exactly: what the day counts per minute across meters (credited or not,
/// the busiest meter's tags, who alone credited it) is kept per minute, as bits; the covered
/// stretches are merged within the hour and merged again across hours, and merging stretches
/// closer than a gap gives the same stretches in any grouping; the INFO cadence keeps the hour's
/// first and last INFO times and what lies between them, so joining two hours adds the one
/// interval between them.
package struct CoverageHour: Sendable, Equatable {
    /// Unix time divided by 3,600, rounded down.
    package var hour: Int
    /// Minutes (bit `minute - hour * 60`) some meter credited.
    package var credited: UInt64 = 0
    /// Each meter with a minute in the hour (credited or not), and its part, in the order of
    /// their names (a list: a month's report holds millions of hours, most of two meters).
    package var meters: [MeterHour] = []
    /// Summed over minutes: each minute counts what its busiest meter saw.
    package var tags = ChannelDay.TagCounts()
    /// Every meter's creditable stretches, merged where less than a gap lies between.
    package var covered: [ClosedRange<Double>] = []
    /// The INFO tags' times: each minute's earliest and latest across meters, in minute order.
    package var info: InfoStretch?

    package struct MeterHour: Sendable, Equatable {
        package var meter: String
        /// Minutes (bit `minute - hour * 60`) this meter credited.
        package var credited: UInt64 = 0
        package var creditable = 0

        package init(meter: String, credited: UInt64 = 0, creditable: Int = 0) {
            (self.meter, self.credited, self.creditable) = (meter, credited, creditable)
        }
    }

    /// The hour's INFO tags as the cadence check reads them: the first minute's earliest, the last
    /// minute's latest, and the intervals between consecutive minutes in between.
    package struct InfoStretch: Sendable, Equatable {
        package var first: Double
        package var last: Double
        /// The longest interval between consecutive minutes' INFO tags within the hour (0 with one minute).
        package var longest: Double
        /// Those intervals longer than `ChannelDay.InfoCadence.limit`.
        package var overLimit: Int

        package init(first: Double, last: Double, longest: Double, overLimit: Int) {
            (self.first, self.last, self.longest, self.overLimit) = (first, last, longest, overLimit)
        }
    }

    package init(hour: Int) { self.hour = hour }

    package init(hour: Int, credited: UInt64, meters: [MeterHour], tags: ChannelDay.TagCounts, covered: [ClosedRange<Double>],
                 info: InfoStretch?) {
        (self.hour, self.credited, self.meters, self.tags, self.covered, self.info) = (hour, credited, meters, tags, covered, info)
    }

    /// The minutes of `hour`.
    package static func minutes(of hour: Int) -> Range<Int> { hour * 60..<hour * 60 + 60 }

    /// The hour of a minute (`CoverageMinute.minute`).
    package static func hour(of minute: Int) -> Int { minute >= 0 ? minute / 60 : (minute - 59) / 60 }

    /// `minutes` (each meter's, of this hour) folded. Counts and credit come from the minutes in
    /// `counted` alone, INFO times from those within `onAir`; the covered stretches and the
    /// meters from all of them. The collector's stored hours count everything: the report uses
    /// one only for an hour wholly on air, where these limits leave nothing out.
    package init(hour: Int, minutes: [String: [CoverageMinute]], counted: Range<Int> = Int.min..<Int.max,
                 onAir: Range<Double> = -Double.infinity..<Double.infinity) {
        self.hour = hour
        var busiest: [Int: ChannelDay.TagCounts] = [:]
        var infoByMinute: [Int: ClosedRange<Double>] = [:]
        var stretches: [[ClosedRange<Double>]] = []
        for (meter, all) in minutes {
            let list = all.filter { CoverageHour.hour(of: $0.minute) == hour }
            guard !list.isEmpty else { continue }
            var part = MeterHour(meter: meter)
            for minute in list {
                guard counted.contains(minute.minute) else { continue }
                let bit = UInt64(1) << UInt64(minute.minute - hour * 60)
                if minute.creditable > 0 {
                    part.credited |= bit
                    part.creditable += minute.creditable
                }
                var most = busiest[minute.minute] ?? ChannelDay.TagCounts()
                most.creditable = max(most.creditable, minute.creditable)
                most.info = max(most.info, minute.info)
                most.placeholder = max(most.placeholder, minute.placeholder)
                most.invalid = max(most.invalid, minute.invalid)
                busiest[minute.minute] = most
                if let first = minute.infoFirst, let last = minute.infoLast {
                    let known = infoByMinute[minute.minute]
                    infoByMinute[minute.minute] = min(known?.lowerBound ?? first, first)...max(known?.upperBound ?? last, last)
                }
            }
            meters.append(part)
            credited |= part.credited
            stretches.append(list.flatMap(\.covered))
        }
        meters.sort { $0.meter < $1.meter }
        for most in busiest.values {
            tags.creditable += most.creditable
            tags.info += most.info
            tags.placeholder += most.placeholder
            tags.invalid += most.invalid
        }
        covered = ChannelDay.union(stretches, threshold: CoverageMinute.gapThreshold)
        for key in infoByMinute.keys.sorted() {
            let span = infoByMinute[key]!
            guard span.upperBound >= onAir.lowerBound, span.lowerBound < onAir.upperBound else { continue }
            guard var known = info else {
                info = InfoStretch(first: span.lowerBound, last: span.upperBound, longest: 0, overLimit: 0)
                continue
            }
            known.add(span)
            info = known
        }
    }
}

extension CoverageHour.InfoStretch {
    /// `span` (a later minute's INFO tags, or a later hour's first to last) appended.
    mutating func add(_ span: ClosedRange<Double>, longest inner: Double = 0, overLimit innerOver: Int = 0) {
        let interval = span.lowerBound - last
        longest = max(longest, interval, inner)
        overLimit += (interval > ChannelDay.InfoCadence.limit ? 1 : 0) + innerOver
        last = span.upperBound
    }
}
