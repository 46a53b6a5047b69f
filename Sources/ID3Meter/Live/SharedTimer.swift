import Foundation
import NIOCore
import NIOPosix

/// One timer for many sleepers: a heap of deadlines that one thread waits on, resuming every
/// sleeper whose deadline has passed at each wake. `serve`'s channels each sleep for their frame
/// clock, their playlist reloads and their watch, thousands of sleeps a second over a line-up;
/// on `ContinuousClock` each is a libdispatch timer armed and a wake of its manager thread, and a
/// profile of 1,000 channels put a third of the process in those switches. Here a wake serves
/// every sleeper due by then (as Netty's HashedWheelTimer serves its bucket): sleepers due within
/// `slack` of each other wake together, none before its deadline.
package final class SharedTimer: @unchecked Sendable {
    /// The process's timer: its thread runs as long as the process. It wakes its due sleepers
    /// from the process's event loops, where serve runs its tasks.
    package static let shared = SharedTimer(wakingOn: MultiThreadedEventLoopGroup.singleton)

    /// How long after the earliest deadline the thread wakes, to serve its neighbours in one go:
    /// a sleeper is at most this late (the frame clock's pacing is judged at a frame, 33 ms).
    package static let slack = Duration.microseconds(500)
    /// The longest the thread waits at once: its wait is on the wall clock (`NSCondition`),
    /// which may be set back, and must not oversleep a deadline by as much.
    static let longestWait = 0.1

    /// A deadline in nanoseconds from `origin`, rounded up: the heap's moves and comparisons
    /// are of plain integers (a standard-library `Instant`, seen from here, is copied and
    /// compared through its type's witnesses, and that was most of the heap's time).
    private struct Entry {
        var deadline: Int64
        var id: UInt64
    }

    private let origin = ContinuousClock.now

    /// Who waits for an entry: a task asleep in `sleep(until:)`, or an alarm's call.
    private enum Waiter: Sendable {
        case sleeper(CheckedContinuation<Void, any Error>)
        case alarm(@Sendable () -> Void)

        func wake() {
            switch self {
            case .sleeper(let sleeper): sleeper.resume()
            case .alarm(let ring): ring()
            }
        }
    }

    // Every var is read and written with `condition` locked.
    private let condition = NSCondition()
    private var heap: [Entry] = []
    private var sleepers: [UInt64: Waiter] = [:]
    private var nextID: UInt64 = 0
    /// The deadline the thread sleeps until; `nil` while it waits for a first sleeper.
    private var waitingUntil: Int64?

    /// Where each wake's due sleepers are resumed; `nil`: on the timer's thread.
    private let loops: (any EventLoopGroup)?

    /// A timer of its own, its thread running as long as the process (`shared` is the one to use).
    /// With `loops`, each wake hands its due sleepers to one of them, in turn: a task resumed
    /// from the timer's own thread is queued on a loop from outside it, a lock taken and the
    /// loop's thread woken for each, where one hand-over serves them all.
    package init(wakingOn loops: (any EventLoopGroup)? = nil) {
        self.loops = loops
        let thread = Thread { self.run() }
        thread.name = "id3-meter timer"
        thread.start()
    }

    /// Sleeps until `deadline`, or throws `CancellationError` as soon as the task is cancelled.
    package func sleep(until deadline: ContinuousClock.Instant) async throws {
        let id = condition.withLock {
            nextID += 1
            return nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (sleeper: CheckedContinuation<Void, any Error>) in
                condition.withLock {
                    // Cancelled before it could wait: the handler below has already run, finding nothing.
                    if Task.isCancelled { return sleeper.resume(throwing: CancellationError()) }
                    add(.sleeper(sleeper), id: id, until: deadline)
                }
            }
        } onCancel: {
            if case .sleeper(let sleeper) = remove(id) { sleeper.resume(throwing: CancellationError()) }
        }
    }

    /// Calls `ring` on the timer's thread once `deadline` has passed, unless the returned
    /// cancel is called first. No task waits meanwhile: a feeder's frame clock, woken a few
    /// times a second on each of a line-up's channels, was a task resumed on this thread, then
    /// one resumed by it, at every wake.
    package func alarm(at deadline: ContinuousClock.Instant, ring: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let id = condition.withLock {
            nextID += 1
            add(.alarm(ring), id: nextID, until: deadline)
            return nextID
        }
        return { _ = self.remove(id) }
    }

    /// Called with `condition` locked.
    private func add(_ waiter: Waiter, id: UInt64, until instant: ContinuousClock.Instant) {
        let deadline = nanoseconds(to: instant, roundingUp: true)
        sleepers[id] = waiter
        push(Entry(deadline: deadline, id: id))
        if waitingUntil.map({ deadline < $0 }) ?? true { condition.signal() }
    }

    /// `instant` in nanoseconds from `origin`; one further than an Int64 of them reaches
    /// (some 292 years) is as far as half of it, which no sleeper waits for.
    private func nanoseconds(to instant: ContinuousClock.Instant, roundingUp: Bool) -> Int64 {
        let (seconds, attoseconds) = origin.duration(to: instant).components
        guard abs(seconds) < 4_000_000_000 else { return seconds < 0 ? .min / 2 : .max / 2 }
        let (whole, rest) = attoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        return seconds * 1_000_000_000 + whole + (roundingUp && rest > 0 ? 1 : 0)
    }

    private func remove(_ id: UInt64) -> Waiter? {
        condition.withLock {
            defer { compactIfStale() }
            return sleepers.removeValue(forKey: id)
        }
    }

    /// A cancelled sleeper's entry stays in the heap, skipped at its deadline. A stream can have
    /// a feeder replace its far wake-up at every tag, so the stale entries are dropped once they
    /// outnumber the live ones (and a few more): the heap stays within twice its sleepers.
    private func compactIfStale() {
        guard heap.count > 2 * sleepers.count + Self.staleAllowance else { return }
        // In deadline order an array is a heap.
        heap = heap.filter { sleepers[$0.id] != nil }.sorted { $0.deadline < $1.deadline }
    }

    static let staleAllowance = 1_024

    /// How many sleepers and alarms are waiting, and how many entries the heap holds (a test's view).
    package var waiting: (sleepers: Int, entries: Int) { condition.withLock { (sleepers.count, heap.count) } }

    private func run() {
        condition.lock()
        while true {
            let now = nanoseconds(to: .now, roundingUp: false)
            var due: [Waiter] = []
            while let head = heap.first, head.deadline <= now {
                popFirst()
                if let sleeper = sleepers.removeValue(forKey: head.id) { due.append(sleeper) }
            }
            if !due.isEmpty {
                condition.unlock()
                if let loop = loops?.next() {
                    let batch = due
                    loop.execute { for waiter in batch { waiter.wake() } }
                } else {
                    for waiter in due { waiter.wake() }
                }
                condition.lock()
                continue
            }
            if let head = heap.first {
                waitingUntil = head.deadline
                let wait = Double(head.deadline - now) / 1e9 + Self.slack.seconds
                _ = condition.wait(until: Date(timeIntervalSinceNow: min(wait, Self.longestWait)))
            } else {
                waitingUntil = nil
                condition.wait()
            }
        }
    }

    // A binary min-heap on `deadline`.

    private func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
