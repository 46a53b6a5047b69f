/// The clock a meter's frame clock, reloads and watch wait on: the continuous clock, each sleep
/// its own timer (`id3-meter URL`), or the process's `SharedTimer`, which a line-up's thousands
/// of sleepers share (`serve`). One type either way, so the meter's generic pieces are made once.
package struct MeterClock: Clock {
    package typealias Instant = ContinuousClock.Instant
    package typealias Duration = Swift.Duration

    /// Where sleeps wait; `nil`: each on its own (`ContinuousClock`).
    package var timer: SharedTimer?

    package init(timer: SharedTimer? = nil) {
        self.timer = timer
    }

    package var now: Instant { ContinuousClock.now }
    package var minimumResolution: Swift.Duration { ContinuousClock().minimumResolution }

    package func sleep(until deadline: Instant, tolerance: Swift.Duration?) async throws {
        guard let timer else { return try await ContinuousClock().sleep(until: deadline, tolerance: tolerance) }
        try await timer.sleep(until: deadline)
    }
}

extension MeterClock: AlarmClock {
    /// The shared timer's alarm; on its own, none (a feeder then sleeps a task until its wake).
    package func alarm(at deadline: Instant, ring: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? {
        timer?.alarm(at: deadline, ring: ring)
    }
}
