import Foundation
import CID3MeterShim
import CoreMetrics
import ID3Meter
import Logging
import ServiceLifecycle

/// The channels being metered, by name. A channel whose config changes is ended and started
/// again; the others are left running, so reloading a config touches only what changed. An
/// actor: changes from SIGHUP and from the API come one at a time.
public actor Lineup: Service {
    /// Each channel and the task it runs on, ended by cancelling it.
    private var channels: [String: (run: ChannelRun, task: Task<Void, Never>)] = [:]
    /// The config last applied: a channel added over the API takes its defaults.
    public private(set) var config = LineupConfig(channels: [], defaults: .template)
    private let fetcher: Fetcher
    private let output: OutputSet
    package let logger: Logger
    /// The channels' lines, held to a budget a minute; the line-up's own (audit) lines are not.
    private let channelLog: ChannelLog
    private let metrics: any MetricsFactory
    /// What a previous run recorded last of each channel (`--state`), for the channel's first start.
    private var resumePoints: [String: ResumePoint]
    /// A release of freed memory is due (`releaseFreedMemory`).
    private var releaseDue = false

    /// `metrics` makes each channel's series (a Prometheus factory for `serve`); a channel
    /// started for the first time resumes after its point in `resume`.
    package init(fetcher: Fetcher, output: OutputSet, logger: Logger, metrics: any MetricsFactory,
                resume: ResumePoints = ResumePoints()) {
        self.fetcher = fetcher
        self.output = output
        self.logger = logger
        channelLog = ChannelLog(logger: logger)
        self.metrics = metrics
        resumePoints = resume.byChannel
    }

    /// Makes the line-up `config`'s: new channels start, changed ones restart, missing ones end.
    /// Channels added over the API stay until deleted (a file channel of the same name replaces one).
    public func apply(_ config: LineupConfig) async {
        self.config = config
        let wanted = Set(config.channels.map(\.name))
        let gone = channels.filter { !wanted.contains($0.key) && !$0.value.run.config.addedOverAPI }.map(\.key)
        for name in gone { await remove(name) }
        for channel in config.channels { await put(channel) }
    }

    /// Adds a channel, or replaces the one of the same name when its config differs; `false`
    /// when an identical channel was already running.
    @discardableResult
    public func put(_ config: ChannelConfig) async -> Bool {
        // A loop: another change of the same channel may have come in while this one waited.
        while let current = channels[config.name] {
            guard current.run.config != config else { return false }
            // Its series go with it, before the new run makes them again.
            channels[config.name] = nil
            await Self.end(current.task)
            logger.notice("channel \(config.name): config changed, started again")
        }
        let run = ChannelRun(config: config, fetcher: fetcher, output: output, log: channelLog, metrics: metrics,
                             resume: resumePoint(config))
        channels[config.name] = (run, Task { await run.run() })
        return true
    }

    /// The point a channel starting for the first time resumes after: only once, and only for
    /// the stream it was recorded from.
    private func resumePoint(_ config: ChannelConfig) -> ResumePoint? {
        guard let point = resumePoints.removeValue(forKey: config.name) else { return nil }
        guard point.input == config.url else {
            logger.notice("channel \(config.name): its last recorded delivery is of \(point.input), not \(config.url); starting afresh")
            return nil
        }
        return point
    }

    /// Ends a channel (its engine's `end()` called, its last records written); `false` when
    /// there is none of that name.
    @discardableResult
    public func remove(_ name: String) async -> Bool {
        guard let channel = channels.removeValue(forKey: name) else { return false }
        await Self.end(channel.task)
        releaseFreedMemory()
        return true
    }

    /// A second after channels were ended (once for a burst of deletions), the allocator's free
    /// pages go back to the system: glibc keeps them otherwise, and a line-up that added and
    /// deleted 3,000 channels stayed at its peak (private memory 3 MB before, 79 MB after). Again
    /// after the longest a channel waits: an ended channel's cancelled wait keeps its timer (and
    /// the pages it sits on) until the wait would have ended, and only then can they go back
    /// (53 MB a second after the deletions, 8 MB a minute later).
    private func releaseFreedMemory() {
        guard !releaseDue else { return }
        releaseDue = true
        Task {
            try? await Task.sleep(for: .seconds(1))
            self.released()
            try? await Task.sleep(for: .seconds(ChannelRun.longestPause + 5))
            idm_release_free_memory()
        }
    }

    private func released() {
        releaseDue = false
        idm_release_free_memory()
    }

    /// Runs until the service group shuts down (SIGTERM, SIGINT), then ends every channel.
    public func run() async {
        try? await gracefulShutdown()
        await removeAll()
    }

    /// A channel's task cancelled, and waited for until its last records are written.
    private static func end(_ task: Task<Void, Never>) async {
        task.cancel()
        await task.value
    }

    public func removeAll() async {
        let all = channels.values.map(\.task)
        channels = [:]
        await withTaskGroup(of: Void.self) { group in
            for task in all { group.addTask { await Self.end(task) } }
        }
        channelLog.flush()
    }

    /// How many channels run.
    public var count: Int { channels.count }

    /// The config of the channel called `name`, if it runs.
    public func channel(_ name: String) -> ChannelConfig? { channels[name]?.run.config }

    /// The audit trail: says `action` on `channel` by `caller` in a log line and a
    /// `config_change` record, and counts it (`id3meter_config_changes_total`).
    public func audit(_ action: String, channel: String?, by caller: String, old: String?, new: String?) async {
        let change = ConfigChange(action: action, channel: channel, by: caller, old: old, new: new)
        logger.notice("config change: \(change.message)")
        await output.write(change.record(at: Date()))
        Counter(label: "id3meter_config_changes_total", dimensions: [("action", action)], factory: metrics).increment()
    }

    /// Sets every channel's gauges that move with time alone, before a scrape.
    public func refreshGauges() {
        channels.values.forEach { $0.run.refreshGauges() }
    }

    /// Every channel's status, by name.
    public var statuses: [ChannelStatus] {
        channels.values.map(\.run.status).sorted { $0.name < $1.name }
    }

    /// Every channel's status and last hour of tags, by name.
    package var timelines: [(status: ChannelStatus, timeline: TagTimeline)] {
        channels.values.map { ($0.run.status, $0.run.timeline) }.sorted { $0.status.name < $1.status.name }
    }
}
