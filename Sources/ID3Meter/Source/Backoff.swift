/// How long to wait before trying again after failures in a row: `first` after the first,
/// doubling up to `maximum`. The one rule for every loop that tries again: a fetch, a playlist
/// reload, the collector's sending, a `serve` channel whose stream will not open.
package struct Backoff: Sendable, Equatable {
    package var first: Duration
    package var maximum: Duration

    package init(first: Duration, maximum: Duration) {
        self.first = first
        self.maximum = Swift.max(maximum, first)
    }

    /// The wait after `failures` failures in a row (none: no wait).
    package func delay(after failures: Int) -> Duration {
        guard failures > 0 else { return .zero }
        var delay = first
        for _ in 1..<Swift.min(failures, 64) where delay < maximum { delay *= 2 }
        return Swift.min(delay, maximum)
    }
}
