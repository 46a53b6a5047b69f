import Testing
@testable import ID3Meter

/// The one back-off every retrying loop uses.
@Suite("Back-off")
struct BackoffTests {
    @Test func doublesFromTheFirstToTheMost() {
        let backoff = Backoff(first: .milliseconds(500), maximum: .seconds(4))
        #expect((0...6).map { backoff.delay(after: $0) }
                == [.zero, .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(4), .seconds(4)])
    }

    /// A channel down for weeks counts millions of failures: the wait stays the most, no overflow.
    @Test func aLongRunOfFailuresStaysAtTheMost() {
        #expect(Backoff(first: .seconds(1), maximum: .seconds(60)).delay(after: .max) == .seconds(60))
        #expect(Backoff(first: .seconds(8), maximum: .seconds(2)).delay(after: 3) == .seconds(8), "a most below the first is the first")
    }
}
