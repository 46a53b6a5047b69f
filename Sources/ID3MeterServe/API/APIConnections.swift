import NIOCore
import Prometheus
import Synchronization

/// The API's open connections, held to a cap so that a flood can neither exhaust the process's
/// descriptors nor crowd out a probe: past the cap, the connection that has waited longest
/// without a request is closed to make room (an idle keep-alive, a slow or silent client), never
/// one whose request is being answered. `/healthz` thus always finds a place, as it must for
/// Kubernetes not to restart a healthy pod.
final class APIConnections: Sendable {
    let maximum: Int
    private let table = Mutex<[ObjectIdentifier: Entry]>([:])
    private let open: Gauge
    private let evicted: Counter

    private struct Entry {
        let channel: any Channel
        /// A request has been read whole and is being answered.
        var answering = false
        /// When it was opened or last answered: the oldest idle one goes first.
        var since: NIODeadline
    }

    init(maximum: Int, registry: PrometheusCollectorRegistry) {
        self.maximum = max(maximum, 1)
        open = registry.gauge("id3meter_api_connections", help: "Connections open to the API.")
        evicted = registry.counter("id3meter_api_connections_evicted_total",
                                       help: "API connections closed, idle, to make room past --api-max-connections.")
    }

    func opened(_ channel: any Channel) {
        let (victim, count): ((any Channel)?, Int) = table.withLock { table in
            table[ObjectIdentifier(channel)] = Entry(channel: channel, since: .now())
            guard table.count > maximum else { return (nil, table.count) }
            let idle = table.filter { !$0.value.answering && $0.key != ObjectIdentifier(channel) }
            // When every other one is being answered, the newcomer waits its turn elsewhere.
            let key = idle.min { $0.value.since < $1.value.since }?.key ?? ObjectIdentifier(channel)
            return (table.removeValue(forKey: key)?.channel, table.count)
        }
        open.set(Double(count))
        if let victim {
            evicted.increment()
            victim.close(promise: nil)
        }
    }

    func answering(_ channel: any Channel, _ answering: Bool) {
        table.withLock { table in
            table[ObjectIdentifier(channel)]?.answering = answering
            table[ObjectIdentifier(channel)]?.since = .now()
        }
    }

    func closed(_ channel: any Channel) {
        let count = table.withLock { table in
            table.removeValue(forKey: ObjectIdentifier(channel))
            return table.count
        }
        open.set(Double(count))
    }
}
