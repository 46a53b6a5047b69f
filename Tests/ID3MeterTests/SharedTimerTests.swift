import Foundation
import NIOPosix
import Testing
@testable import ID3Meter

/// The one timer `serve`'s channels sleep in: nobody wakes before their deadline, everybody
/// soon after it, and a cancelled sleeper at once.
@Suite("The shared timer", .serialized, .timeLimit(.minutes(1)))
struct SharedTimerTests {
    /// A timer of the suite's own: the process's is shared with the line-ups other suites run.
    static let timer = SharedTimer()

    struct Wake {
        var deadline: ContinuousClock.Instant
        var at: ContinuousClock.Instant
    }

    @Test func sleepersWakeInDeadlineOrderNeverEarly() async throws {
        let timer = Self.timer
        let start = ContinuousClock.now
        // 300 sleepers, their deadlines shuffled over 0.3 s, some equal.
        let offsets = (0..<300).map { Duration.milliseconds(($0 * 7919) % 300) }
        let woke = Collected<Wake>()
        await withTaskGroup(of: Void.self) { group in
            for offset in offsets {
                group.addTask {
                    let deadline = start + .milliseconds(20) + offset
                    try? await timer.sleep(until: deadline)
                    let now = ContinuousClock.now
                    woke.append(Wake(deadline: deadline, at: now))
                }
            }
        }
        let wakes = woke.all
        #expect(wakes.count == offsets.count)
        #expect(wakes.allSatisfy { $0.at >= $0.deadline }, "none before its deadline")
        let late = wakes.map { $0.deadline.duration(to: $0.at) }.sorted()
        // Most within the slack and a thread's wake; under a loaded test run, a few more.
        #expect(late[late.count / 2] < .milliseconds(20), "median \(late[late.count / 2])")
        #expect(timer.waiting.sleepers == 0)
    }

    @Test func aCancelledSleeperWakesAtOnceAndIsForgotten() async throws {
        let timer = SharedTimer()
        let sleeping = Task { try await timer.sleep(until: .now + .seconds(3_600)) }
        // Waiting for it to be registered: the timer says how many wait.
        let deadline = ContinuousClock.now + .seconds(10)
        while timer.waiting.sleepers == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(timer.waiting.sleepers == 1)
        let cancelled = ContinuousClock.now
        sleeping.cancel()
        await #expect(throws: CancellationError.self) { try await sleeping.value }
        #expect(cancelled.duration(to: .now) < .seconds(1))
        #expect(timer.waiting.sleepers == 0)
        // A task cancelled before it sleeps does not wait at all.
        let already = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await timer.sleep(until: .now + .seconds(3_600))
        }
        await #expect(throws: CancellationError.self) { try await already.value }
    }

    /// Far wake-ups cancelled one after another (a feeder replacing its wake at every tag) do
    /// not pile up in the heap until their deadlines.
    @Test func cancelledFarSleepersDoNotAccumulate() async throws {
        let timer = SharedTimer()
        for _ in 0..<10_000 {
            let sleeping = Task { try await timer.sleep(until: .now + .seconds(86_400)) }
            sleeping.cancel()
            _ = try? await sleeping.value
        }
        let waiting = timer.waiting
        #expect(waiting.sleepers == 0)
        #expect(waiting.entries <= 2 * waiting.sleepers + SharedTimer.staleAllowance + 1, "\(waiting.entries) entries left")
    }

    /// An alarm (a feeder's wake-up) rings once, never before its deadline; one cancelled
    /// before its deadline never rings and is forgotten. Rung from the timer's thread, or handed
    /// to the event loops (as the process's timer does).
    @Test(arguments: [false, true]) func alarmsRingAfterTheirDeadlineAndCancelledOnesNever(onLoops: Bool) async throws {
        let timer = SharedTimer(wakingOn: onLoops ? MultiThreadedEventLoopGroup.singleton : nil)
        let start = ContinuousClock.now
        let rung = Collected<(index: Int, at: ContinuousClock.Instant)>()
        var cancels: [@Sendable () -> Void] = []
        for index in 0..<200 {
            let deadline = start + .milliseconds(30 + (index * 7919) % 200)
            cancels.append(timer.alarm(at: deadline) { rung.append((index, ContinuousClock.now)) })
        }
        // The odd ones cancelled, long before their deadlines.
        for index in stride(from: 1, to: 200, by: 2) { cancels[index]() }
        let until = ContinuousClock.now + .seconds(20)
        while rung.all.count < 100, ContinuousClock.now < until { try await Task.sleep(for: .milliseconds(10)) }
        // Past the last deadline, with room for a cancelled one to ring by mistake.
        try await Task.sleep(until: start + .milliseconds(400))
        let all = rung.all
        #expect(all.map(\.index).sorted() == Array(stride(from: 0, to: 200, by: 2)), "each even one once, no odd one")
        #expect(all.allSatisfy { $0.at >= start + .milliseconds(30 + ($0.index * 7919) % 200) }, "none before its deadline")
        #expect(timer.waiting.sleepers == 0)
    }

    /// As a meter uses it: `MeterClock` sleeps in the shared timer or on its own, the same way.
    @Test func theMeterClockSleepsEitherWay() async throws {
        for clock in [MeterClock(), MeterClock(timer: .shared)] {
            let start = clock.now
            try await clock.sleep(for: .milliseconds(30))
            #expect(start.duration(to: clock.now) >= .milliseconds(30))
        }
    }
}
