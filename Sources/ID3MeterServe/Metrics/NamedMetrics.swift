import Prometheus

extension PrometheusCollectorRegistry {
    /// A gauge named whole, as the alert rules and dashboards spell it: swift-prometheus builds a
    /// name from a descriptor's parts (namespace, subsystem, name, unit), and empty parts are left out.
    func gauge(_ name: String, labels: [(String, String)] = [], help: String = "") -> Gauge {
        makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: labels)
    }

    /// A counter named whole (see `gauge`).
    func counter(_ name: String, labels: [(String, String)] = [], help: String = "") -> Counter {
        makeCounter(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: labels)
    }
}
