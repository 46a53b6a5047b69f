import Foundation

/// Events passed from the task that reads an input to a thread that collects them (formats the
/// records, builds the report), so that the two run on two cores: on a dense input each is
/// about half the work. Events travel in batches; at most `batchesAhead` wait at once, and the
/// reader waits when they do, so memory stays bounded whatever the collector's pace.
// Unchecked: every var is read and written under `condition`.
final class EventHandoff: @unchecked Sendable {
    static let batchSize = 256
    static let batchesAhead = 8

    private let condition = NSCondition()
    private var ready: [[MediaEvent]] = []
    private var closed = false
    /// Filled by the reader alone, outside the lock.
    private var filling: [MediaEvent] = []

    init() { filling.reserveCapacity(Self.batchSize) }

    /// From the reader, in stream order.
    func add(_ event: MediaEvent) {
        filling.append(event)
        if filling.count >= Self.batchSize { hand(close: false) }
    }

    /// From the reader, once it has emitted its last event.
    func finish() { hand(close: true) }

    /// From the collector: the next batch, or `nil` once the reader finished and every batch was taken.
    func next() -> [MediaEvent]? {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty && !closed { condition.wait() }
        guard !ready.isEmpty else { return nil }
        condition.broadcast()
        return ready.removeFirst()
    }

    private func hand(close: Bool) {
        var batch: [MediaEvent] = []
        swap(&batch, &filling)
        filling.reserveCapacity(Self.batchSize)
        condition.lock()
        defer { condition.unlock() }
        while ready.count >= Self.batchesAhead { condition.wait() }
        if !batch.isEmpty { ready.append(batch) }
        closed = close
        condition.broadcast()
    }
}
