import ID3Meter
import Prometheus
import Synchronization

/// The outputs' series, read from their counts at each scrape: writes refused, records held in
/// memory, dropped and dead-lettered, and whether each output is failing now (the alert).
final class OutputMetrics: Sendable {
    private let outputs: OutputSet
    private let registry: PrometheusCollectorRegistry
    /// The totals last put into the counters, by output: counters only move by the difference.
    private let reported = Mutex<[String: OutputHealth]>([:])

    init(outputs: OutputSet, registry: PrometheusCollectorRegistry) {
        self.outputs = outputs
        self.registry = registry
    }

    /// Brings the series up to the outputs' counts; every series exists from the first call, at
    /// zero while nothing has gone wrong.
    func refresh() async {
        for health in await outputs.healths {
            let labels = [("output", health.output)]
            let before = reported.withLock { reported in
                defer { reported[health.output] = health }
                return reported[health.output] ?? OutputHealth(output: health.output)
            }
            for (name, help, now, then) in [
                ("id3meter_output_write_errors_total", "Writes an output's storage refused.", health.writeErrors, before.writeErrors),
                ("id3meter_output_records_lost_total", "Records an output dropped: held past its bound, or at exit.",
                 health.recordsLost, before.recordsLost),
                ("id3meter_output_records_dead_lettered_total", "Records the collector refused for good, in the spool's dead-letter folder.",
                 health.recordsDeadLettered, before.recordsDeadLettered),
            ] {
                registry.counter(name, labels: labels, help: help).increment(by: Int64(max(0, now - then)))
            }
            registry.gauge("id3meter_output_records_held", labels: labels,
                               help: "Records held in memory until the output's storage takes them.").set(to: Double(health.recordsHeld))
            registry.gauge("id3meter_output_failing", labels: labels,
                               help: "1 while the output cannot be written.").set(to: health.failure == nil ? 0.0 : 1.0)
        }
    }
}
