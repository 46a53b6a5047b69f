import NIOCore
import Prometheus
import Synchronization

/// The API's open connections, held to a cap so that a flood can neither exhaust the process's
/// descriptors nor crowd out a probe: past the cap, the connection that has waited longest
/// without a request is closed to make room (an idle keep-alive, a slow or silent client), never
/// one whose request is being read or answered. When every one is busy (posts waiting on the
/// database), a newcomer takes one of `probeReserve` places kept for `/healthz`, `/readyz` and
/// `/metrics` alone: a probe always finds a place, as it must for Kubernetes not to restart a
/// healthy pod, and the reserve never carries the posts that filled the rest.
final class APIConnections: Sendable {
    let maximum: Int
    /// Places past `maximum` for the probes' paths only.
    static let probeReserve = 8
    private let table = Mutex<(entries: [ObjectIdentifier: Entry], busy: Int)>(([:], 0))
    private let open: Gauge
    private let inProgress: Gauge
    private let evicted: Counter

    private struct Entry {
        let channel: any Channel
        /// In the probes' reserve: it may ask for their paths only.
        let reserved: Bool
        /// A request has begun (its head read) and is not answered yet.
        var busy = false
        /// When it was opened or last answered: the oldest idle one goes first.
        var since: NIODeadline
    }

    init(maximum: Int, registry: PrometheusCollectorRegistry) {
        self.maximum = max(maximum, 1)
        open = registry.gauge("id3meter_api_connections", help: "Connections open to the API.")
        inProgress = registry.gauge("id3meter_api_requests_in_progress", help: "API requests begun (their head read) and not yet answered.")
        evicted = registry.counter("id3meter_api_connections_evicted_total",
                                   help: "API connections closed, idle, to make room past --api-max-connections.")
    }

    /// Counts `channel` in; whether it is in the probes' reserve. A newcomer for which no place
    /// can be made is closed.
    @discardableResult
    func opened(_ channel: any Channel) -> Bool {
        let (victim, reserved, count): ((any Channel)?, Bool, Int) = table.withLock { state in
            let id = ObjectIdentifier(channel)
            // Moved out and back, not copied: the table may hold thousands (a flood).
            var table: [ObjectIdentifier: Entry] = [:]
            swap(&table, &state.entries)
            defer { swap(&table, &state.entries) }
            let regular = table.values.count { !$0.reserved }
            if regular < maximum {
                table[id] = Entry(channel: channel, reserved: false, since: .now())
                return (nil, false, table.count)
            }
            func oldestIdle(reserved: Bool) -> ObjectIdentifier? {
                table.filter { $0.value.reserved == reserved && !$0.value.busy }.min { $0.value.since < $1.value.since }?.key
            }
            if let idle = oldestIdle(reserved: false) {
                let victim = table.removeValue(forKey: idle)?.channel
                table[id] = Entry(channel: channel, reserved: false, since: .now())
                return (victim, false, table.count)
            }
            var victim: (any Channel)?
            if table.count - regular >= Self.probeReserve {
                guard let idle = oldestIdle(reserved: true) else { return (channel, false, table.count) }
                victim = table.removeValue(forKey: idle)?.channel
            }
            table[id] = Entry(channel: channel, reserved: true, since: .now())
            return (victim, true, table.count)
        }
        open.set(Double(count))
        if let victim {
            evicted.increment()
            victim.close(promise: nil)
        }
        return reserved
    }

    /// A request began (`true`) or was answered (`false`) on `channel`.
    func busy(_ channel: any Channel, _ busy: Bool) {
        let count = table.withLock { state in
            let id = ObjectIdentifier(channel)
            guard let was = state.entries[id]?.busy else { return state.busy }
            state.entries[id]?.busy = busy
            state.entries[id]?.since = .now()
            state.busy += (busy ? 1 : 0) - (was ? 1 : 0)
            return state.busy
        }
        inProgress.set(Double(count))
    }

    func closed(_ channel: any Channel) {
        let (count, busy) = table.withLock { state in
            if state.entries.removeValue(forKey: ObjectIdentifier(channel))?.busy == true { state.busy -= 1 }
            return (state.entries.count, state.busy)
        }
        open.set(Double(count))
        inProgress.set(Double(busy))
    }
}
