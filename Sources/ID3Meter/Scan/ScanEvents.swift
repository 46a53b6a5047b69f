import Synchronization

extension TagScanner {
    /// `input`'s events in stream order, pulled: what `scan(_:emit:)` hands a callback, as an
    /// `AsyncSequence` that throws the failure that ended the reading (`InputFailure`: it cannot
    /// be opened or read on, its playlist cannot be had...), as `TagSource` does; a failure the
    /// reading goes on after (a segment lost) is a `.failure` event. Nothing is read
    /// before the first pull; a chunk's events (a segment's, a network read's) are out as soon
    /// as it is read. The reading runs in a task of its own, at most a few chunks
    /// ahead of the consumer (then it waits, and with it the read: memory stays bounded
    /// however slow the consumer). Cancelling the pulling task, or leaving the loop, ends the
    /// reading where it is, its network and libavformat waits included.
    ///
    /// `scan(_:emit:)` is the same reading with no task hop, for a consumer on a hot path; it
    /// hands out every failure as an event, the one that ended the reading last.
    public func events(_ input: String) -> some AsyncSequence<MediaEvent, InputFailure> & Sendable {
        ScanEvents(scanner: self, input: input)
    }
}

private struct ScanEvents: AsyncSequence, Sendable {
    let scanner: TagScanner
    let input: String

    typealias Failure = InputFailure

    func makeAsyncIterator() -> ReadingIterator<Batches> { ReadingIterator(Batches(reading: Reading(scanner: scanner, input: input))) }

    /// The events of the handed-over batches, one at a time.
    struct Batches: AsyncIteratorProtocol {
        let reading: Reading
        var batch: [MediaEvent] = []
        var index = 0

        mutating func next() async -> MediaEvent? {
            while index == batch.count {
                guard let next = await reading.next() else { return nil }
                (batch, index) = (next, 0)
            }
            defer { index += 1 }
            return batch[index]
        }
    }

    /// One reading of the input: its task, started at the first pull, and stopped when the
    /// iterator goes away or its task is cancelled.
    final class Reading: Sendable {
        private let scanner: TagScanner
        private let input: String
        private let handoff = EventHandoff()
        private let task = Mutex<Task<Void, Never>?>(nil)

        init(scanner: TagScanner, input: String) {
            var scanner = scanner
            // Its own interrupt: stopping this reading stops no other of the same scanner.
            scanner.fetcher.interrupt = scanner.fetcher.interrupt.child()
            self.scanner = scanner
            self.input = input
        }

        deinit { stop() }

        func next() async -> [MediaEvent]? {
            task.withLock { task in
                guard task == nil else { return }
                let (scanner, input, handoff) = (scanner, input, handoff)
                task = Task {
                    var sender = EventHandoff.Sender(handoff)
                    await scanner.scan(input, emit: { sender.add($0) }, afterEachChunk: {
                        sender.flush()
                        await sender.room()
                    })
                    sender.finish()
                }
            }
            return await withTaskCancellationHandler { await handoff.next() } onCancel: { stop() }
        }

        private func stop() {
            task.withLock { $0 }?.cancel()
            scanner.fetcher.interrupt.cancel()
            handoff.abandon()
        }
    }
}
