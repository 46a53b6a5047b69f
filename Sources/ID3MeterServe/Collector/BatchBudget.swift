import Prometheus

/// The bytes of the batches being read and stored at once, held to a budget: while it is stored
/// a batch's records take several times its bytes (16 times for one of tiny records), so three
/// big posts at once would be gigabytes. A post waits its turn, first come first served; one
/// alone always goes, whatever its size, and small ones go side by side.
actor BatchBudget {
    let limit: Int
    private var used = 0 { didSet { held.set(Double(used)) } }
    private var waiting: [(bytes: Int, turn: CheckedContinuation<Void, Never>)] = [] { didSet { queued.set(Double(waiting.count)) } }
    private let held: Gauge
    private let queued: Gauge

    init(limit: Int, registry: PrometheusCollectorRegistry) {
        self.limit = limit
        held = registry.gauge("id3meter_collector_batch_bytes", help: "Bytes of the batches being read and stored now (at most --max-batch-size but for one alone).")
        queued = registry.gauge("id3meter_collector_batches_waiting", help: "Posts waiting for the batches before them to be stored.")
    }

    /// `work` once `bytes` fit in the budget, and the bytes given back after it.
    nonisolated func spending<T: Sendable>(_ bytes: Int, _ work: () async -> T) async -> T {
        await take(bytes)
        let result = await work()
        await give(bytes)
        return result
    }

    private func take(_ bytes: Int) async {
        guard !fits(bytes) || !waiting.isEmpty else {
            used += bytes
            return
        }
        await withCheckedContinuation { waiting.append((bytes, $0)) }
    }

    private func give(_ bytes: Int) {
        used -= bytes
        while let next = waiting.first, fits(next.bytes) {
            waiting.removeFirst()
            used += next.bytes
            next.turn.resume()
        }
    }

    private func fits(_ bytes: Int) -> Bool { used == 0 || used + bytes <= limit }
}
