import Foundation
import Synchronization
import Testing
@testable import ID3Meter
@testable import ID3MeterCore

@Suite("Event handoff", .timeLimit(.minutes(1)))
struct EventHandoffTests {
    /// Readers whose collectors fall behind wait suspended: all of them, on an executor of one
    /// thread, come to wait for room (a reader that blocked its thread while it waited, as the
    /// handoff's reader did before, would keep the others from arriving).
    @Test func readersWaitingForRoomHoldNoThread() async throws {
        let readers = 4
        let perReader = (EventHandoff.batchesAhead + 2) * EventHandoff.batchSize + 17
        let handoffs = (0..<readers).map { _ in EventHandoff() }
        let counts = Counts()
        let oneThread = SerialTaskExecutor()
        await withTaskGroup(of: Void.self) { group in
            for handoff in handoffs {
                group.addTask(executorPreference: oneThread) {
                    var sender = EventHandoff.Sender(handoff)
                    for number in 0..<perReader {
                        sender.add(.mediaTime(Int64(number), origin: TagOrigin(source: "reader")))
                        guard number == EventHandoff.batchesAhead * EventHandoff.batchSize else { continue }
                        counts.arrived.add(1, ordering: .sequentiallyConsistent)
                        await sender.room()
                        counts.passed.add(1, ordering: .sequentiallyConsistent)
                    }
                    sender.finish()
                }
            }
            let deadline = ContinuousClock.now + .seconds(20)
            while counts.arrived.load(ordering: .sequentiallyConsistent) < readers, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(2))
            }
            #expect(counts.arrived.load(ordering: .sequentiallyConsistent) == readers, "every reader came to wait on the one thread")
            // Every reader has a full handoff and waits: nothing has let any of them on.
            #expect(counts.passed.load(ordering: .sequentiallyConsistent) == 0)
            for handoff in handoffs {
                var times: [Int64] = []
                while let batch = await handoff.next() {
                    #expect(batch.count <= EventHandoff.batchSize)
                    for case .mediaTime(let time, _) in batch { times.append(time) }
                }
                #expect(times == (0..<Int64(perReader)).map { $0 }, "every event once, in order")
            }
        }
        #expect(counts.passed.load(ordering: .sequentiallyConsistent) == readers)
    }

    /// Runs its jobs one at a time on one serial queue: a job that blocks holds it.
    final class SerialTaskExecutor: TaskExecutor {
        private let queue = DispatchQueue(label: "one thread")

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    final class Counts: Sendable {
        let arrived = Atomic<Int>(0)
        let passed = Atomic<Int>(0)
    }

    /// A collector that asks before anything was sent gets the first batch, and the end.
    @Test func aWaitingCollectorGetsTheBatchAndTheEnd() async {
        let handoff = EventHandoff()
        async let collected = { () async -> [[MediaEvent]] in
            var batches: [[MediaEvent]] = []
            while let batch = await handoff.next() { batches.append(batch) }
            return batches
        }()
        var sender = EventHandoff.Sender(handoff)
        sender.add(.mediaTime(1, origin: TagOrigin(source: "one")))
        sender.finish()
        let batches = await collected
        #expect(batches.map(\.count) == [1])
        let empty = EventHandoff()
        var nothing = EventHandoff.Sender(empty)
        nothing.finish()
        #expect(await empty.next() == nil)
    }
}
