import Foundation
import Synchronization

/// Sends meter records to an HTTP collector as JSON batches, under the contract in
/// docs/COLLECTOR.md: `POST`, body `{"batch":"<id>","meter_version":"<version>","records":[...]}`,
/// the batch id again in an `Idempotency-Key` header, so that a collector can drop a batch it
/// already has (a retry after a timeout may reach it twice). Records go through an on-disk
/// spool (`Spool`): a batch leaves it after a 2xx answer; 408, 429, 5xx and connection errors
/// are retried with growing pauses (at least what `Retry-After` asks); a 413 splits the batch
/// in two, down to single records; any other answer moves the batch to the spool's
/// `dead-letter/` folder, and the batches after it go on. Batches left by an earlier run go first.
///
/// The caller drives its life: `run()` (in a task of its own, or a task group) sends until
/// `finish()`, which stops it and sends what is left. Records written while `run()` is not
/// running wait in the spool.
public final class CollectorOutput: MeterOutput, Sendable {
    /// How batches are sent and retried, and how much the spool may hold.
    public struct Settings: Sendable {
        /// How often the open batch is sealed and sent.
        public var batchInterval: Duration = .seconds(1)
        public var firstRetryDelay: Duration = .seconds(1)
        public var maximumRetryDelay: Duration = .seconds(30)

        var backoff: Backoff { Backoff(first: firstRetryDelay, maximum: maximumRetryDelay) }
        public var requestTimeout: Duration = .seconds(10)
        /// Sent with every batch besides the contract's own: a collector's token
        /// (`Authorization: Bearer ...`), a tenant header.
        public var headers: [Fetcher.Header] = []
        /// How long `finish()` keeps trying before it leaves the rest in the spool.
        public var finishTimeout: Duration = .seconds(5)
        /// Bytes the spool's files may take (`--spool-max-size`); records past it are held in
        /// memory and sent from there.
        public var spoolMaximumBytes: UInt64?
        /// Bytes of records held in memory (the disk refusing, or the spool full) before the
        /// oldest are dropped and counted.
        public var memoryLimit = 64 << 20

        public init() {}
    }

    public let collector: URL
    private let spool: Mutex<Spool>
    private let settings: Settings
    private let onError: @Sendable (String) -> Void
    private let accepted: @Sendable (Substring) async -> Void
    private let spoolIdentifier: String
    /// `finish()` asks `run()` to stop through this, and waits for `runEnded`.
    private let stop = AsyncStream.makeStream(of: Void.self)
    private let runEnded = AsyncStream.makeStream(of: Void.self)
    private let running = Mutex(false)

    /// Opens (or creates) the spool at `spoolDirectory`. Nothing is sent until `run()`.
    /// `accepted` gets each batch's JSON lines once they leave the spool (delivered, or
    /// dead-lettered: either way they were recorded), before they do: a checkpoint is written
    /// from them.
    public init(collector: URL, spoolDirectory: URL, settings: Settings = Settings(),
                onError: @escaping @Sendable (String) -> Void = { _ in },
                accepted: @escaping @Sendable (Substring) async -> Void = { _ in }) throws(SpoolError) {
        self.collector = collector
        self.settings = settings
        self.onError = onError
        self.accepted = accepted
        let spool = try Spool(directory: spoolDirectory, maximumBytes: settings.spoolMaximumBytes, holdLimit: settings.memoryLimit)
        spool.notes.forEach(onError)
        spoolIdentifier = spool.identifier
        self.spool = Mutex(spool)
    }

    /// Sends what the spool holds, then seals and sends every `batchInterval` (waiting longer
    /// after a failure), until `finish()` or cancellation.
    public func run() async {
        running.withLock { $0 = true }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [stop] in for await _ in stop.stream {} }
            group.addTask { [self] in await sendLoop() }
            await group.next()
            group.cancelAll()
        }
        runEnded.continuation.finish()
    }

    public func write(_ record: MeterRecord) {
        let line = record.jsonLine
        spool.withLock { $0.append(line, sentAt: record.sentAt, channel: record.channel) }
    }

    public var health: OutputHealth? { spool.withLock { $0.health } }

    public func takeNotices() -> [MeterRecord] {
        spool.withLock { spool in
            let (changes, loss) = spool.take()
            return LineWriter.Change.records(changes, loss: loss, health: spool.health, at: Date())
        }
    }

    /// Stops `run()`, seals the open batch and sends what it can within `finishTimeout`; the
    /// rest stays spooled, but for records only memory held, which are counted as lost.
    public func finish() async {
        stop.continuation.finish()
        if running.withLock({ $0 }) { for await _ in runEnded.stream {} }
        let deadline = ContinuousClock.now.advanced(by: settings.finishTimeout)
        var failures = 0
        while ContinuousClock.now < deadline, case .wait(let asked) = await sendPending() {
            failures += 1
            try? await Task.sleep(for: min(max(settings.backoff.delay(after: failures), asked ?? .zero), ContinuousClock.now.duration(to: deadline)))
        }
        let left = spool.withLock { spool in
            spool.abandonHeld()
            return spool.queue.count
        }
        if left > 0 { onError("\(left) batch\(left == 1 ? "" : "es") left in the spool for the next run") }
    }

    /// Seals and sends on every interval; after a failure waits longer and longer, and at least
    /// what the collector's `Retry-After` asked.
    private func sendLoop() async {
        var delay = settings.batchInterval
        var failures = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { break }
            // Not cancelled part way: a batch the collector took but whose answer was cut off
            // would stay in the spool and go again at `finish`, delivered twice to a collector
            // that does not keep Idempotency-Keys. Its own timeouts bound the wait.
            let sending = Task { await self.sendPending() }
            switch await sending.value {
            case .allSent:
                failures = 0
                delay = settings.batchInterval
            case .wait(let asked):
                failures += 1
                delay = max(settings.backoff.delay(after: failures), asked ?? .zero)
            }
        }
    }

    private enum Progress { case allSent, wait(Duration?) }

    /// Seals the open batch and sends every batch in order, until one has to wait.
    private func sendPending() async -> Progress {
        spool.withLock { $0.seal() }
        while let (batch, text) = spool.withLock({ spool in spool.next.map { ($0, spool.text(of: $0)) } }) {
            guard let text else {
                onError("cannot read the spooled batch \(batch.name); trying again later")
                return .wait(nil)
            }
            switch await send(text, id: "\(spoolIdentifier)-\(batch.name)") {
            case .delivered:
                await accepted(text[...])
                spool.withLock { $0.remove(batch) }
            case .retry(let after):
                return .wait(after.map { .seconds($0) })
            case .tooLarge:
                let split = spool.withLock { $0.split(batch) }
                if !split { await reject(batch, text: text, why: "the collector answered 413 (too large) to a single record") }
            case .rejected(let why):
                await reject(batch, text: text, why: why)
            }
        }
        return .allSent
    }

    private func reject(_ batch: Spool.Batch, text: String, why: String) async {
        let count = text.split(separator: "\n").count
        onError("collector \(collector): \(why); batch \(batch.name) (\(count) record\(count == 1 ? "" : "s")) moved to "
                + "the spool's dead-letter folder ('id3-meter spool' lists and retries it)")
        await accepted(text[...])
        spool.withLock { $0.deadLetter(batch, why: why) }
    }

    private enum Answer { case delivered, retry(after: Double?), tooLarge, rejected(String) }

    private func send(_ lines: String, id: String) async -> Answer {
        let records = lines.split(separator: "\n").joined(separator: ",")
        let body = #"{"batch":"\#(id)","meter_version":"\#(ID3MeterVersion.current)","records":[\#(records)]}"#
        let headers = settings.headers + [Fetcher.Header(name: "Content-Type", value: "application/json"),
                                          Fetcher.Header(name: "Idempotency-Key", value: id)]
        do {
            let answer = try await HTTPTransport.post(Array(body.utf8), to: collector.absoluteString, headers: headers,
                                                      timeout: settings.requestTimeout.seconds)
            switch answer.status {
            case 200..<300:
                return .delivered
            case 413:
                return .tooLarge
            case 408, 429, 500...:
                onError("collector \(collector) answered \(answer.status); batch kept in the spool and sent again"
                        + (answer.retryAfter.map { " in at least \(Int($0.rounded(.up))) s (Retry-After)" } ?? ""))
                return .retry(after: answer.retryAfter)
            default:
                let said = answer.bodyStart.isEmpty ? "" : ": \(answer.bodyStart.prefix(200).replacingOccurrences(of: "\n", with: " "))"
                return .rejected("the collector answered \(answer.status)\(said)")
            }
        } catch {
            if case .redirect(let why) = error { return .rejected(why) }
            if !Task.isCancelled { onError("collector \(collector): \(error); batch kept in the spool") }
            return .retry(after: nil)
        }
    }
}
