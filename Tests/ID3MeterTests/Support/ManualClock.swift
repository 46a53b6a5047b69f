import Synchronization
@testable import ID3MeterCore

/// A clock a test moves by hand: a sleeper wakes only when `advance(to:)` passes its deadline,
/// so a test can see what a timer waits for (`sleeper(until:)`) before time moves on.
final class ManualClock: Clock, Sendable {
    typealias Instant = InstantClock.Instant

    private struct Sleeper {
        var id: Int
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Sleeper] = []
        var cancelled: Set<Int> = []
        var watchers: [(deadline: Instant, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    static func at(_ seconds: Double) -> Instant { Instant(offset: .seconds(seconds)) }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    let (met, waiting) = (state.watchers.filter { Self.near($0.deadline, deadline) },
                                          state.watchers.filter { !Self.near($0.deadline, deadline) })
                    state.watchers = waiting
                    met.forEach { $0.continuation.resume() }
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let sleeper: Sleeper? = state.withLock { state in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time to `instant`, waking every sleeper whose deadline it reaches.
    func advance(to instant: Instant) {
        let woken: [Sleeper] = state.withLock { state in
            state.now = max(state.now, instant)
            let due = state.sleepers.filter { $0.deadline <= state.now }
            state.sleepers.removeAll { $0.deadline <= state.now }
            return due
        }
        woken.forEach { $0.continuation.resume() }
    }

    /// Within a millisecond: a deadline made of frames is a sum of doubles.
    private static func near(_ one: Instant, _ other: Instant) -> Bool {
        abs((one.offset - other.offset) / .milliseconds(1)) < 1
    }

    /// Returns once someone sleeps until `deadline` (within a millisecond).
    func sleeper(until deadline: Instant) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let already = state.withLock { state in
                if state.sleepers.contains(where: { Self.near($0.deadline, deadline) }) { return true }
                state.watchers.append((deadline, continuation))
                return false
            }
            if already { continuation.resume() }
        }
    }
}
