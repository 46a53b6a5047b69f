import Synchronization

/// Events passed from the task that reads an input to the task that collects them (formats the
/// records, builds the report), so that the two run on two cores: on a dense input each is
/// about half the work. Events travel in batches; once `batchesAhead` wait, the reader waits in
/// `room()` (between chunks it reads) for the collector to take one, so memory stays bounded
/// whatever the collector's pace. Either side waits suspended: neither holds a thread of the
/// cooperative pool the other may need.
final class EventHandoff: Sendable {
    static let batchSize = 256
    static let batchesAhead = 8

    private struct State {
        var ready: [[MediaEvent]] = []
        var closed = false
        /// The collector is gone: what the reader hands over is dropped, and it never waits.
        var abandoned = false
        var waitingReader: CheckedContinuation<Void, Never>?
        var waitingCollector: CheckedContinuation<[MediaEvent]?, Never>?
    }

    private let state = Mutex(State())

    /// The reader's end: events are added one at a time, in stream order, and handed over a batch at a time.
    struct Sender {
        let handoff: EventHandoff
        private var filling: [MediaEvent] = []

        init(_ handoff: EventHandoff) { self.handoff = handoff }

        /// Never waits: a chunk's events go on even when the collector is behind (`room()` is where the reader waits).
        mutating func add(_ event: MediaEvent) {
            if filling.isEmpty { filling.reserveCapacity(EventHandoff.batchSize) }
            filling.append(event)
            if filling.count >= EventHandoff.batchSize { handoff.hand(take(), closing: false) }
        }

        /// Hands over what is filled, however little: for a consumer that must see a chunk's
        /// events when the chunk is read (a live stream's, which may be all for a while).
        mutating func flush() {
            if !filling.isEmpty { handoff.hand(take(), closing: false) }
        }

        /// Returns once fewer than `batchesAhead` batches wait for the collector.
        func room() async { await handoff.room() }

        /// Hands over what is left and tells the collector there is no more.
        mutating func finish() { handoff.hand(take(), closing: true) }

        private mutating func take() -> [MediaEvent] {
            defer { filling = [] }
            return filling
        }
    }

    /// From the collector: the next batch, or `nil` once the reader finished and every batch was taken.
    func next() async -> [MediaEvent]? {
        await withCheckedContinuation { continuation in
            let (answer, reader) = state.withLock { state -> ([MediaEvent]??, CheckedContinuation<Void, Never>?) in
                guard !state.ready.isEmpty else {
                    if state.closed { return (.some(nil), nil) }
                    state.waitingCollector = continuation
                    return (nil, nil)
                }
                let batch = state.ready.removeFirst()
                guard state.ready.count < Self.batchesAhead else { return (batch, nil) }
                defer { state.waitingReader = nil }
                return (batch, state.waitingReader)
            }
            reader?.resume()
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// From the collector, when it stops taking batches before the end (cancelled): a reader
    /// waiting for room goes on (to see that it was cancelled), a collector waiting for a batch
    /// gets the end, and nothing more is kept.
    func abandon() {
        let (reader, collector) = state.withLock { state in
            state.abandoned = true
            state.closed = true
            state.ready = []
            defer { (state.waitingReader, state.waitingCollector) = (nil, nil) }
            return (state.waitingReader, state.waitingCollector)
        }
        reader?.resume()
        collector?.resume(returning: nil)
    }

    private func hand(_ batch: [MediaEvent], closing: Bool) {
        let collector = state.withLock { state -> CheckedContinuation<[MediaEvent]?, Never>? in
            if closing { state.closed = true }
            if state.abandoned { return nil }
            guard let collector = state.waitingCollector else {
                if !batch.isEmpty { state.ready.append(batch) }
                return nil
            }
            // Waiting means nothing was ready: this batch (or the end) is its answer.
            if batch.isEmpty && !closing { return nil }
            state.waitingCollector = nil
            return collector
        }
        collector?.resume(returning: batch.isEmpty ? nil : batch)
    }

    private func room() async {
        await withCheckedContinuation { continuation in
            let full = state.withLock { state in
                guard state.ready.count >= Self.batchesAhead, !state.abandoned else { return false }
                state.waitingReader = continuation
                return true
            }
            if !full { continuation.resume() }
        }
    }
}
