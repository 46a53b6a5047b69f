import Foundation
import Synchronization

/// Sends meter records to an HTTP collector as JSON batches (`POST`, body
/// `{"batch":"<id>","meter_version":"<version>","records":[...]}`), through an on-disk spool: a record is on disk before
/// `write` returns, a batch leaves the spool only after a 2xx answer, a failed send is retried
/// with exponential backoff, and batches left by an earlier run go first.
///
/// The caller drives its life: `run()` (in a task of its own, or a task group) sends until
/// `finish()`, which stops it and sends what is left. Records written while `run()` is not
/// running wait in the spool.
public final class CollectorOutput: MeterOutput, Sendable {
    /// How batches are sent and retried.
    public struct Settings: Sendable {
        /// How often the open batch is sealed and sent.
        public var batchInterval: Duration = .seconds(1)
        public var firstRetryDelay: Duration = .seconds(1)
        public var maximumRetryDelay: Duration = .seconds(30)
        public var requestTimeout: Double = 10
        /// How long `finish()` keeps trying before it leaves the rest in the spool.
        public var finishTimeout: Duration = .seconds(5)

        public init() {}
    }

    public let collector: URL
    private let spool: Mutex<Spool>
    private let settings: Settings
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    private let onError: @Sendable (String) -> Void
    private let accepted: @Sendable (Substring) -> Void
    private let spoolIdentifier: String
    /// `finish()` asks `run()` to stop through this, and waits for `runEnded`.
    private let stop = AsyncStream.makeStream(of: Void.self)
    private let runEnded = AsyncStream.makeStream(of: Void.self)
    private let running = Mutex(false)

    /// Opens (or creates) the spool at `spoolDirectory`. Nothing is sent until `run()`.
    /// `accepted` gets each batch's JSON lines once the collector has them, before the batch
    /// leaves the spool (a checkpoint is written from them).
    public init(collector: URL, spoolDirectory: URL, settings: Settings = Settings(),
                onError: @escaping @Sendable (String) -> Void = { _ in },
                accepted: @escaping @Sendable (Substring) -> Void = { _ in }) throws {
        self.collector = collector
        self.settings = settings
        self.onError = onError
        self.accepted = accepted
        let spool = try Spool(directory: spoolDirectory)
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
        let line = (try? encoder.encode(record)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        do {
            try spool.withLock { try $0.append(line) }
        } catch {
            onError("cannot write to the spool: \(error)")
        }
    }

    /// Stops `run()`, seals the open batch and sends what it can within `finishTimeout`; the
    /// rest stays spooled.
    public func finish() async {
        stop.continuation.finish()
        if running.withLock({ $0 }) { for await _ in runEnded.stream {} }
        let deadline = ContinuousClock.now.advanced(by: settings.finishTimeout)
        var delay = settings.firstRetryDelay
        while ContinuousClock.now < deadline, !(await sendPending()) {
            try? await Task.sleep(for: min(delay, ContinuousClock.now.duration(to: deadline)))
            delay = min(delay * 2, settings.maximumRetryDelay)
        }
        let left = (try? spool.withLock { try $0.pendingBatches().count }) ?? 0
        if left > 0 { onError("\(left) batch\(left == 1 ? "" : "es") left in the spool for the next run") }
    }

    /// Seals and sends on every interval; after a failure waits longer and longer.
    private func sendLoop() async {
        var delay = settings.batchInterval
        while !Task.isCancelled {
            try? await Task.sleep(for: delay)
            let sent = await sendPending()
            delay = sent ? settings.batchInterval : min(max(delay * 2, settings.firstRetryDelay), settings.maximumRetryDelay)
        }
    }

    /// Seals the open batch and sends every spooled batch in order; false at the first failure.
    private func sendPending() async -> Bool {
        let batches: [URL]
        do {
            batches = try spool.withLock { spool in
                try spool.seal()
                return try spool.pendingBatches()
            }
        } catch {
            onError("spool: \(error)")
            return false
        }
        for batch in batches {
            guard let lines = try? String(contentsOf: batch, encoding: .utf8), await send(lines[...], id: batch) else { return false }
            accepted(lines[...])
            try? spool.withLock { try $0.remove(batch) }
        }
        return true
    }

    private func send(_ lines: Substring, id batch: URL) async -> Bool {
        let records = lines.split(separator: "\n").joined(separator: ",")
        let id = "\(spoolIdentifier)-\(batch.deletingPathExtension().lastPathComponent)"
        let body = #"{"batch":"\#(id)","meter_version":"\#(ID3MeterVersion.current)","records":[\#(records)]}"#
        do {
            let status = try await HTTPTransport.post(Array(body.utf8), to: collector.absoluteString, contentType: "application/json",
                                                      timeout: settings.requestTimeout)
            guard (200..<300).contains(status) else {
                onError("collector \(collector) answered \(status); batch kept in the spool")
                return false
            }
            return true
        } catch {
            if !Task.isCancelled { onError("collector \(collector): \(error); batch kept in the spool") }
            return false
        }
    }
}
