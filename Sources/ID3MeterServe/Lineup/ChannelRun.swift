import CoreMetrics
import Foundation
import ID3Meter
import ID3MeterReport
import Logging
import Synchronization

/// One channel of the line-up being metered: a `StreamMeter`, exactly as `id3-meter URL` runs
/// it, with an engine of its own, a tag-loss watch and its status. A stream that cannot be
/// opened is tried again after a pause that grows to a minute: a line-up is metered around the
/// clock. (A live stream that stops answering is not that: its playlist is reloaded until it
/// answers again.) A live channel whose playlist shows EXT-X-ENDLIST is opened again the same
/// way, resuming after its last delivered tag (an ENDLIST may be a packager's glitch); only a
/// channel configured `vod: true` ends there. The engine lives as long as the channel, so a tag
/// delivered before a retry is not delivered again after it.
public final class ChannelRun: Sendable {
    public let config: ChannelConfig
    /// The last delivery a previous run recorded (`--state`): the first run resumes after it.
    public let resume: ResumePoint?

    private struct State {
        var watch: TagLossWatch
        var status: ChannelStatus
        var timeline: TimelineRecorder
        var checks: ChannelChecks
        /// The last delivery: where a reopened stream resumes.
        var lastDelivery: ResumePoint?
        /// Why the stream cannot be read (it could not be opened, or its segments do not
        /// parse), in the `stream_unreadable` alert's words.
        var unreadableReason: String?
        /// The last segment or reload given up on, for the words of the alert it starts.
        var lastFetchFailure: String?
    }

    /// The longest pause before a stream that could not be opened is tried again, in seconds.
    static let longestPause = 60.0
    private static let backoff = Backoff(first: .seconds(1), maximum: .seconds(longestPause))

    /// The live page shows a channel's last hour, and the details of its latest tags.
    static let timelineWindow = 3_600.0
    static let detailedTags = 50

    private let state: Mutex<State>
    private let output: OutputSet
    private let fetcher: Fetcher
    private let log: ChannelLog
    private let metrics: ChannelMetrics
    /// Every channel's sleeps (its frame clock, reloads, watch and retries) wait in one timer.
    private let clock = MeterClock(timer: .shared)
    private let started: ContinuousClock.Instant

    /// `fetcher` holds the line-up's limits and retries; the channel's headers are added to it.
    init(config: ChannelConfig, fetcher: Fetcher, output: OutputSet, log: ChannelLog, metrics: any MetricsFactory,
         resume: ResumePoint? = nil) {
        self.config = config
        self.resume = resume
        var fetcher = fetcher
        fetcher.headers += config.headers
        fetcher.tls.caFiles += config.tls.caFiles
        if let certificate = config.tls.clientCertificate {
            (fetcher.tls.clientCertificate, fetcher.tls.clientKey) = (certificate, config.tls.clientKey)
        }
        fetcher.hostRule = config.hostRule
        // Each channel cancels its own libav reads (udp, srt) only.
        fetcher.interrupt = Interrupt()
        self.fetcher = fetcher
        self.output = output
        self.log = log
        self.metrics = ChannelMetrics(channel: config.name, factory: metrics)
        started = clock.now
        var status = ChannelStatus(name: config.name)
        status.source = config.addedOverAPI ? "api" : "file"
        state = Mutex(State(watch: TagLossWatch(alertAfter: config.alertAfter), status: status,
                            timeline: TimelineRecorder(details: .latest(Self.detailedTags), window: Self.timelineWindow),
                            checks: ChannelChecks(channel: config.name, at: 0)))
    }

    public var status: ChannelStatus { state.withLock { $0.status } }

    /// The channel's last hour of tags as read from its stream.
    package var timeline: TagTimeline { state.withLock { $0.timeline.timeline } }

    /// Meters and watches the channel until the task is cancelled; by then the engine's session
    /// is ended, its last records written and its series gone.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.meter() }
            group.addTask { await self.watch() }
            if let interval = config.renditionAudit { group.addTask { await self.auditRenditions(every: interval) } }
        }
        metrics.destroy()
    }

    /// Sets the gauges that move with time alone: the last tag's age (since the channel started,
    /// while it has had none).
    func refreshGauges() {
        let age = state.withLock { state in now - (state.watch.lastTag ?? 0) }
        metrics.lastTagAge.record(age)
    }

    private var now: Double { started.duration(to: clock.now).seconds }

    private func meter() async {
        let engine = await ReferenceEngine(appInfo: config.appInfo, outputs: [ChannelOutput(run: self)],
                                     logger: log.logger.with(channel: config.name))
        var resume = self.resume
        // Runs in a row that delivered nothing: the next waits longer, up to `longestPause`.
        var quiet = 0
        // A stream that stays down is said at its first failure, when the reason changes, and
        // every tenth attempt (about ten minutes at the longest pause), not at every retry.
        var failures = 0
        var lastReason: String?
        while !Task.isCancelled {
            var failure: String?
            var opened = false
            var delivered = 0
            var meter = StreamMeter(input: config.url, session: MeteringSession(channelName: config.name, adModel: config.adModel),
                                    scanner: TagScanner(variant: config.variant, programs: config.program.map { .only($0) } ?? .all, fetcher: fetcher),
                                    liveStart: config.liveStart,
                                    frameRateOption: config.fps, resume: resume)
            meter.timer = clock.timer
            // The failure that ended the stream's reading is seen as the others are.
            for await event in meter.events(engine: engine).caught({ .read(.failure($0)) }) {
                switch event {
                case .read(let read):
                    if case .opened = read { opened = true }
                    if case .failure(let reason) = read, reason.segment == nil { failure = reason.kind.description }
                    await observe(read, resumingFrom: resume)
                case .delivered(let lateness):
                    delivered += 1
                    metrics.pacing.record(lateness.seconds)
                case .stalled(let stall):
                    metrics.stall.increment(by: stall.seconds)
                    state.withLock { $0.status.stallSeconds += stall.seconds }
                case .frameRate(let choice):
                    log.log(.info, "channel \(config.name): frame clock at \(choice.framesPerSecond) fps (\(choice.origin))")
                }
            }
            guard !Task.isCancelled else { break }
            if delivered > 0 { quiet = 0 }
            quiet += 1
            let pause = Self.backoff.delay(after: quiet).seconds
            if opened {
                if failures > 0 { log.log(.notice, "channel \(config.name): its stream opened again, after \(failures) failed attempt\(failures == 1 ? "" : "s")") }
                failures = 0
                lastReason = nil
                if config.isVOD {
                    // Meant to end: nothing more is due, and what was open is over.
                    state.withLock { $0.watch.streamEnded() }
                    await check()
                }
                state.withLock { $0.status.state = .ended }
                guard !config.isVOD else {
                    log.log(.notice, "channel \(config.name): its stream ended")
                    break
                }
                log.log(.warning, """
                    channel \(config.name): its live stream showed EXT-X-ENDLIST; opening it again in \(Int(pause)) s, \
                    after its last delivered tag (a channel meant to end is configured vod: true)
                    """)
                resume = state.withLock { $0.lastDelivery } ?? resume
            } else {
                state.withLock {
                    $0.status.state = .failed
                    $0.status.restarts += 1
                }
                failures += 1
                let reason = failure ?? "no reason given"
                state.withLock {
                    $0.watch.failedToOpen()
                    $0.unreadableReason = "the stream could not be opened: \(reason)"
                }
                await check()
                if failures == 1 || reason != lastReason || failures % 10 == 0 {
                    let attempts = failures == 1 ? "" : " (\(failures) attempts so far)"
                    log.log(.warning, "channel \(config.name): its stream could not be opened: \(reason); trying again in \(Int(pause)) s\(attempts)")
                }
                lastReason = reason
            }
            try? await clock.sleep(for: .seconds(pause))
        }
    }

    /// Sleeps until an alert could start, checks, and again; an alert ends as soon as the tag
    /// or segment that ends it arrives (`observe`, `delivered`).
    private func watch() async {
        while !Task.isCancelled {
            let next = state.withLock { $0.watch.nextCheck() } ?? now + 1
            try? await clock.sleep(until: started.advanced(by: .seconds(max(next, now))), tolerance: .milliseconds(10))
            await check()
        }
    }

    private func observe(_ event: MediaEvent, resumingFrom resume: ResumePoint?) async {
        let at = now
        // On the page's axis: PROGRAM-DATE-TIME where the stream has it, else when the tag was read.
        var date: Date?
        if case .tag(let timed) = event, timed.programDateTime == nil { date = Date() }
        let checksChanged = state.withLock { state in
            state.timeline.add(event, date: date)
            guard state.checks.add(event, at: at) else { return nil as [String]? }
            state.status.failingChecks = state.checks.failing
            return state.checks.failing
        }
        if let failing = checksChanged { await checksFailing(failing) }
        state.withLock { state in
            switch event {
            case .opened(let info):
                state.watch.opened(isLive: info.isLive, targetDuration: info.targetDuration, at: at)
                if state.status.state == .failed || state.status.state == .ended { state.status.state = .joining }
            case .segment(let segment):
                // A declared gap is the playlist moving on, without media to read.
                state.watch.segmentRead(at: at)
                if segment.isGap {
                    state.status.segmentsGap += 1
                    metrics.segmentsGap.increment()
                } else if segment.part?.isLast ?? true {
                    // A segment a break divides is read once, whatever its parts.
                    state.status.segmentsRead += 1
                }
            case .failure(let failure):
                switch failure.kind {
                case .segmentSkipped(_, let error):
                    state.status.segmentsFailed += 1
                    metrics.segmentsFailed.increment()
                    // Bytes that came and do not parse are an unreadable stream, not a failing CDN.
                    let unparsable = (error as? SegmentLoadError)?.isUnparsable == true
                    state.watch.segmentFailed(at: at, unparsable: unparsable)
                    if unparsable {
                        state.unreadableReason = "its segments do not parse: \(failure.kind.description)"
                    } else {
                        state.lastFetchFailure = failure.kind.description
                    }
                case .leftLiveWindow(let sequences):
                    state.status.segmentsFailed += sequences.count
                    metrics.segmentsFailed.increment(by: sequences.count)
                case .reloadFailed:
                    state.status.playlistReloadFailures += 1
                    metrics.reloadFailures.increment()
                    state.watch.playlistFailing(true)
                    state.lastFetchFailure = failure.kind.description
                default:
                    break
                }
            case .warning(let warning):
                if case .reloadRecovered = warning.kind { state.watch.playlistFailing(false) }
            case .tag, .malformed, .resumed, .mediaTime:
                break
            }
        }
        // The segment or reload given up on is a record: what the report counts and names the fault by.
        if case .failure(let failure) = event, let record = MeterRecord.fetchFailed(failure, channel: config.name, at: Date()) {
            await write(record)
            await check()
        }
        if case .resumed(let resumption) = event, let resume {
            let record = MeterRecord.resume(resumption, from: resume, at: Date())
            log.log(.notice, "channel \(config.name): \(record.message ?? "")")
            await write(record)
        }
        if case .warning(let warning) = event {
            if case .reloadRecovered = warning.kind { await check() }
            log.log(.warning, "channel \(config.name): \(warning)")
            await write(.warning(warning.kind.description, channel: config.name, at: Date()))
            if case .switchedPath(_, _, let onBackup, _) = warning.kind {
                state.withLock { $0.watch.pathChanged(onBackup: onBackup) }
                metrics.pathSwitches.increment()
                await check()
            }
        }
        if case .segment = event { await check() }
    }

    /// A delivery the engine made: the watch and the counts hear of it before the record goes out.
    fileprivate func delivered(_ delivery: MeterRecord.Delivery, in record: MeterRecord) async {
        guard let tag = NielsenTag(owner: delivery.payload) else { return }
        let at = now
        state.withLock { state in
            state.lastDelivery = ResumePoint(record) ?? state.lastDelivery
            state.watch.delivered(tag, at: at)
            state.status.tags.add(tag)
            state.status.lastTag = Date(timeIntervalSince1970: record.sentAt)
        }
        metrics.delivered.increment()
        if !tag.isValid { metrics.invalid.increment() }
        if tag.hasPlaceholderPCCID { metrics.placeholder.increment() }
        await check()
    }

    fileprivate func write(_ record: MeterRecord) async {
        var record = record
        record.channel = config.name
        await output.write(record)
    }

    private func check() async {
        let at = now
        let (changes, reason) = state.withLock { state in
            let changes = state.watch.check(at: at)
            state.status.alerts = state.watch.active
            switch state.status.state {
            case .failed, .ended: break
            // Read from a backup is still playing.
            case _ where !state.watch.active.subtracting([.onBackup]).isEmpty: state.status.state = .stalled
            case _ where state.watch.lastTag != nil: state.status.state = .playing
            default: break
            }
            return (changes, (unreadable: state.unreadableReason, failure: state.lastFetchFailure))
        }
        for change in changes {
            metrics.alerts[change.alert]?.record(change.active ? 1 : 0)
            let message = Self.words(change.alert, alertAfter: config.alertAfter, unreadable: reason.unreadable, lastFailure: reason.failure)
            // An unreadable stream's log lines are the run loop's (its failure, how often it is
            // retried, its opening again): the alert is its record and its series.
            if change.alert != .streamUnreadable {
                log.log(change.active ? .warning : .notice, "channel \(config.name): alert \(change.alert.rawValue) "
                        + (change.active ? "starts: \(message)" : "ends"))
            }
            await write(.alert(change, channel: config.name, message: message, at: Date()))
        }
    }

    /// The QA checks the channel fails changed: a `failing_checks` alert record starts, names
    /// the checks failing now, or ends. (Not one of the watch's alerts: the tags still come, so
    /// the channel is not stalled.)
    private func checksFailing(_ failing: [String]) async {
        let active = !failing.isEmpty
        metrics.failingChecks.record(failing.count)
        let message = active ? "failing the QA checks " + failing.joined(separator: ", ") : "every QA check passes"
        log.log(active ? .warning : .notice, "channel \(config.name): \(message)")
        await write(.alert("failing_checks", active: active, channel: config.name, message: message, at: Date()))
    }

    /// Reads a few segments of every rendition at once, every `interval` seconds (the first at
    /// a random point of the first interval, so that a line-up's channels do not all audit at
    /// once), and compares their tags: a `renditions_differ` alert record starts when one
    /// is at fault, names them when that changes, and ends when an audit finds them the same. A
    /// stream with one rendition, or that cannot be loaded, is looked at again next time.
    private func auditRenditions(every interval: Double) async {
        var scanner = TagScanner(variant: config.variant, programs: config.program.map { .only($0) } ?? .all, fetcher: fetcher)
        scanner.timer = clock.timer
        var differing: [String] = []
        try? await clock.sleep(for: .seconds(Double.random(in: 0..<interval)))
        while !Task.isCancelled {
            if let comparison = await RenditionAudit(input: config.url, scanner: scanner, timeLimit: .seconds(min(interval, 60))).run() {
                let faults = comparison.renditions.filter { !$0.passed }.map { row in
                    "\(row.name): " + row.faults.map { comparison.words(for: $0, in: row) }.joined(separator: "; ")
                }
                metrics.renditionsDiffering.record(faults.count)
                if faults != differing, !Task.isCancelled {
                    differing = faults
                    state.withLock { $0.status.renditionsDiffering = faults }
                    let message = faults.isEmpty ? "every rendition carries the same tags" : "renditions differ: " + faults.joined(separator: " | ")
                    log.log(faults.isEmpty ? .notice : .warning, "channel \(config.name): \(message)")
                    await write(.alert(Self.renditionsDiffer, active: !faults.isEmpty, channel: config.name, message: message, at: Date()))
                }
            }
            try? await clock.sleep(for: .seconds(interval))
        }
    }

    /// The alert an audit of the renditions raises (`audit_renditions`).
    static let renditionsDiffer = "renditions_differ"

    private static func words(_ alert: TagLossWatch.Alert, alertAfter: Double, unreadable reason: String?, lastFailure: String?) -> String {
        let seconds = alertAfter == alertAfter.rounded() ? String(Int(alertAfter)) : String(alertAfter)
        return switch alert {
        case .noTags: "no Nielsen tag for \(seconds) s"
        case .onlyUncreditableTags: "only invalid or placeholder-CID tags for \(seconds) s"
        case .playlistUnreachable: "the playlist cannot be loaded: \(lastFailure ?? "no reason given")"
        case .playlistStale: "the playlist answers and has not advanced for three target durations"
        case .segmentsFailing: "the playlist advances and its segments fail: \(lastFailure ?? "no reason given")"
        case .onBackup: "read from a redundant copy of the stream: its first host failed"
        case .streamUnreadable: reason ?? "the stream could not be read"
        }
    }
}

/// What a channel's engine writes to: deliveries go to the channel's watch first.
private final class ChannelOutput: MeterOutput {
    private weak let run: ChannelRun?

    init(run: ChannelRun) { self.run = run }

    func write(_ record: MeterRecord) async {
        if let delivery = record.delivery { await run?.delivered(delivery, in: record) }
        await run?.write(record)
    }

    func finish() async {}
}

extension Logger {
    func with(channel: String) -> Logger {
        var logger = self
        logger[metadataKey: "channel"] = "\(channel)"
        return logger
    }
}
