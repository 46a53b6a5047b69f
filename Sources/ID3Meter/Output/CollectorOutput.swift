import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Sends meter records to an HTTP collector as JSON batches (`POST`, body
/// `{"batch":"<id>","meter_version":"<version>","records":[...]}`), through an on-disk spool: a record is on disk before
/// `write` returns, a batch leaves the spool only after a 2xx answer, a failed send is retried
/// with exponential backoff, and batches left by an earlier run go first.
public final class CollectorOutput: MeterOutput, @unchecked Sendable {
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
    private var sender: Task<Void, Never>?
    private let spoolIdentifier: String

    /// Opens (or creates) the spool at `spoolDirectory` and starts sending what it holds.
    public init(collector: URL, spoolDirectory: URL, settings: Settings = Settings(),
                onError: @escaping @Sendable (String) -> Void = { _ in }) throws {
        self.collector = collector
        self.settings = settings
        self.onError = onError
        let spool = try Spool(directory: spoolDirectory)
        spoolIdentifier = spool.identifier
        self.spool = Mutex(spool)
        sender = Task { [self] in await sendLoop() }
    }

    public func write(_ record: MeterRecord) {
        let line = (try? encoder.encode(record)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        do {
            try spool.withLock { try $0.append(line) }
        } catch {
            onError("cannot write to the spool: \(error)")
        }
    }

    /// Seals the open batch and sends what it can within `finishTimeout`; the rest stays spooled.
    public func finish() async {
        sender?.cancel()
        await sender?.value
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
            guard await send(batch) else { return false }
            try? spool.withLock { try $0.remove(batch) }
        }
        return true
    }

    private func send(_ batch: URL) async -> Bool {
        guard let lines = try? String(contentsOf: batch, encoding: .utf8) else { return false }
        let records = lines.split(separator: "\n").joined(separator: ",")
        let id = "\(spoolIdentifier)-\(batch.deletingPathExtension().lastPathComponent)"
        var request = URLRequest(url: collector, timeoutInterval: settings.requestTimeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("id3-meter/\(ID3MeterVersion.current)", forHTTPHeaderField: "User-Agent")
        request.httpBody = Data(#"{"batch":"\#(id)","meter_version":"\#(ID3MeterVersion.current)","records":[\#(records)]}"#.utf8)
        do {
            // In its own task: FoundationNetworking on Linux traps when a request is cancelled mid-flight
            // (TaskRegistry "not in the registry"), and `finish()` cancels the send loop.
            let (_, response) = try await Task { try await URLSession.shared.data(for: request) }.value
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard (200..<300).contains(status) else {
                onError("collector \(collector) answered \(status); batch kept in the spool")
                return false
            }
            return true
        } catch {
            onError("collector \(collector): \(error.localizedDescription); batch kept in the spool")
            return false
        }
    }
}
