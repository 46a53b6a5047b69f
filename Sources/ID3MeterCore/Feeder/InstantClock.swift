import Synchronization

/// A clock whose time moves only when someone sleeps: `sleep(until:)` jumps to the deadline
/// and returns at once. `--speed max` runs the frame clock on it (the same schedule, no
/// waiting), and tests use it for deterministic time.
package final class InstantClock: Clock, Sendable {
    /// A point on the virtual time line: how far the clock has been moved since it was made.
    public struct Instant: InstantProtocol, Sendable {
        public var offset: Duration

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let current = Mutex(Instant(offset: .zero))

    public init() {}

    public var now: Instant { current.withLock { $0 } }
    public var minimumResolution: Duration { .zero }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        current.withLock { $0 = max($0, deadline) }
        await Task.yield()
    }
}
