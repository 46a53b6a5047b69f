import Prometheus

extension PrometheusMetricsFactory {
    /// A factory for a line-up's series on `registry`, with pacing buckets fine enough to tell
    /// a frame (33 ms) and the 15 ms the pacing target allows.
    public static func lineup(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.valueHistogramBuckets[ChannelMetrics.pacingLabel] =
            [0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.033, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]
        return factory
    }
}
