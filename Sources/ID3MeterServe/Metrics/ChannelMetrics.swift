import CoreMetrics
import ID3Meter

/// One channel's series, through swift-metrics: counted as the channel's status is, labelled
/// with its name. The factory is passed in, so that each line-up (and each test) has its own.
struct ChannelMetrics: Sendable {
    let delivered: Counter
    let invalid: Counter
    let placeholder: Counter
    let segmentsFailed: Counter
    /// Segments the packager declared missing (`EXT-X-GAP`): not fetched, not failed.
    let segmentsGap: Counter
    let reloadFailures: Counter
    /// Switches from one redundant copy of the stream to another (`on_backup` says which is read).
    let pathSwitches: Counter
    let lastTagAge: Gauge
    let alerts: [TagLossWatch.Alert: Gauge]
    /// How many of the QA report's checks the channel's tags fail.
    let failingChecks: Gauge
    /// How many renditions the last audit found at fault (`audit_renditions`).
    let renditionsDiffering: Gauge
    /// How late each `sendID3` came after its frame: a histogram.
    let pacing: Recorder
    let stall: FloatingPointCounter

    static let pacingLabel = "id3meter_pacing_error_seconds"

    init(channel: String, factory: any MetricsFactory) {
        let dimensions = [("channel", channel)]
        delivered = Counter(label: "id3meter_tags_delivered_total", dimensions: dimensions, factory: factory)
        invalid = Counter(label: "id3meter_tags_invalid_total", dimensions: dimensions, factory: factory)
        placeholder = Counter(label: "id3meter_tags_placeholder_total", dimensions: dimensions, factory: factory)
        segmentsFailed = Counter(label: "id3meter_segments_failed_total", dimensions: dimensions, factory: factory)
        segmentsGap = Counter(label: "id3meter_segments_gap_total", dimensions: dimensions, factory: factory)
        reloadFailures = Counter(label: "id3meter_playlist_reload_failures_total", dimensions: dimensions, factory: factory)
        pathSwitches = Counter(label: "id3meter_path_switches_total", dimensions: dimensions, factory: factory)
        lastTagAge = Gauge(label: "id3meter_last_tag_age_seconds", dimensions: dimensions, factory: factory)
        failingChecks = Gauge(label: "id3meter_channel_failing_checks", dimensions: dimensions, factory: factory)
        renditionsDiffering = Gauge(label: "id3meter_channel_renditions_differing", dimensions: dimensions, factory: factory)
        pacing = Recorder(label: Self.pacingLabel, dimensions: dimensions, aggregate: true, factory: factory)
        stall = FloatingPointCounter(label: "id3meter_stall_seconds_total", dimensions: dimensions, factory: factory)
        alerts = Dictionary(uniqueKeysWithValues: TagLossWatch.Alert.allCases.map { alert in
            (alert, Gauge(label: "id3meter_channel_alert", dimensions: dimensions + [("alert", alert.rawValue)], factory: factory))
        })
        // Every series exists from the start, so a channel that never delivers still shows 0.
        [delivered, invalid, placeholder, segmentsFailed, segmentsGap, reloadFailures, pathSwitches].forEach { $0.increment(by: 0) }
        stall.increment(by: 0)
        alerts.values.forEach { $0.record(0) }
        failingChecks.record(0)
        renditionsDiffering.record(0)
    }
}

extension ChannelMetrics {
    /// Removes the channel's series: it has left the line-up.
    func destroy() {
        [delivered, invalid, placeholder, segmentsFailed, segmentsGap, reloadFailures, pathSwitches].forEach { $0.destroy() }
        ([lastTagAge, failingChecks, renditionsDiffering] + Array(alerts.values)).forEach { $0.destroy() }
        pacing.destroy()
        stall.destroy()
    }
}
