/// A clock that can call back at a deadline with no task asleep until it: what the feeder's
/// wake-ups use when its clock offers it (serve's shared timer), instead of a task per wake.
package protocol AlarmClock<Instant>: Clock {
    /// Calls `ring` once `deadline` has passed, unless the returned cancel is called first;
    /// `nil` when this clock cannot (the caller sleeps instead).
    func alarm(at deadline: Instant, ring: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)?
}
