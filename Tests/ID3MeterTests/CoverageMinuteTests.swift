import Testing
import ID3MeterReport

/// The collector folds a meter's deliveries into minutes (`CoverageMinute`) in whatever order
/// batches arrive; the gaps found from the minutes must be those of the tags themselves.
@Suite("report: coverage minutes")
struct CoverageMinuteTests {
    /// Gaps of 30 s or more between sorted times, the plain way.
    static func gaps(_ times: [Double]) -> [ClosedRange<Double>] {
        let sorted = times.sorted()
        return zip(sorted, sorted.dropFirst()).filter { $1 - $0 >= 30 }.map { $0...$1 }
    }

    @Test func anyOrderOfArrivalFindsTheTagsOwnGaps() {
        var random = SystemRandomNumberGenerator()
        for round in 0..<2_000 {
            // A few minutes of tags, dense or sparse, each minute's in a shuffled order.
            let count = Int.random(in: 1...40, using: &random)
            let base = 1_795_129_200.0 + Double(round) * 600
            let times = (0..<count).map { _ in base + (Double.random(in: 0..<300, using: &random) * 1_000).rounded() / 1_000 }
            var minutes: [Int: CoverageMinute] = [:]
            for time in times.shuffled(using: &random) {
                let minute = CoverageMinute.minute(of: time)
                minutes[minute, default: CoverageMinute(minute: minute)].add(.creditable, at: time)
            }
            let stretches = ChannelDay.stretches(minutes.values.sorted { $0.minute < $1.minute })
            let found = zip(stretches, stretches.dropFirst()).map { $0.upperBound...$1.lowerBound }
            #expect(found == Self.gaps(times), "round \(round): \(times.sorted())")
        }
    }

    @Test func tagsThatCannotCreditAreCountedNotCovered() {
        var minute = CoverageMinute(minute: 0)
        minute.add(.placeholder, at: 1)
        minute.add(.invalid, at: 2)
        minute.add(.info, at: 3)
        minute.add(.info, at: 50)
        #expect(minute.first == nil && minute.placeholder == 1 && minute.invalid == 1 && minute.info == 2)
        #expect(minute.infoFirst == 3 && minute.infoLast == 50)
    }
}
