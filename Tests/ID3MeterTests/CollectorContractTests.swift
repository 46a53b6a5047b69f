import Foundation
import Synchronization
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// A collector keeping docs/COLLECTOR.md's side of the contract: a batch whose
/// `Idempotency-Key` it has accepted before is answered 2xx and not counted again. `rule`
/// answers first, for the faults a test wants.
final class ContractCollector: Sendable {
    struct Seen: Sendable {
        var posts: [(key: String, records: Int, at: ContinuousClock.Instant)] = []
        var accepted: [String: [MeterRecord.Decoded]] = [:]
        /// Keys in the order they were first accepted.
        var order: [String] = []
    }

    final class SeenBox: Sendable {
        let lock = Mutex(Seen())
        func withLock<T>(_ body: (inout Seen) -> T) -> T { lock.withLock { body(&$0) } }
    }

    typealias Rule = @Sendable (_ key: String, _ records: [MeterRecord.Decoded], _ body: Int) -> LocalHTTPServer.Response?

    let seen = SeenBox()
    let server: LocalHTTPServer

    /// `rule` sees each POST's key and records and returns an answer to give instead of accepting it.
    init(host: String = "127.0.0.1", rule: @escaping Rule = { _, _, _ in nil }) throws {
        server = try LocalHTTPServer(host: host) { [seen] request in
            guard let batch = try? JSONDecoder().decode(MeterRecord.Batch.self, from: Data(request.body)),
                  let key = request.headers["idempotency-key"], key == batch.batch else {
                return LocalHTTPServer.Response(status: 400, body: Array("no batch, or its key is not the batch id".utf8))
            }
            seen.withLock { $0.posts.append((key, batch.records.count, .now)) }
            if let answer = rule(key, batch.records, request.body.count) { return answer }
            seen.withLock { seen in
                if seen.accepted[key] == nil { seen.order.append(key) }
                seen.accepted[key] = batch.records
            }
            return LocalHTTPServer.Response(status: 200)
        }
    }

    var url: URL { URL(string: server.url("collect"))! }

    /// The payloads accepted, batch by batch in the order they first came, each batch once.
    var payloads: [String] {
        seen.withLock { seen in
            var payloads: [String] = []
            for key in seen.order { payloads += (seen.accepted[key] ?? []).compactMap(\.payload) }
            return payloads
        }
    }
}

@Suite("The collector contract", .serialized, .timeLimit(.minutes(2)))
struct CollectorContractTests {
    static var settings: CollectorOutput.Settings { CollectorOutputTests.settings }

    static func payload(_ index: Int, padding: Int) -> String {
        "www.nielsen.com/\(index)" + String(repeating: "x", count: padding)
    }

    static func record(_ index: Int, padding: Int = 0) -> MeterRecord {
        let context = TagContext(pts: Int64(index), origin: TagOrigin(source: "s"), programDateTime: nil)
        return .delivery(payload(index, padding: padding), context: context, at: Date(timeIntervalSince1970: 1_000 + Double(index)))
    }

    static func names(_ range: Range<Int>, padding: Int = 0) -> [String] {
        range.map { payload($0, padding: padding) }
    }

    /// Waits, looking every 20 ms for up to 20 s, until `done` holds.
    static func wait(until done: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while !done() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    static func answer(_ status: Int, _ body: String = "", headers: [String: String] = [:]) -> LocalHTTPServer.Response {
        LocalHTTPServer.Response(status: status, body: Array(body.utf8), headers: headers)
    }

    @Test func aRefusedBatchIsDeadLetteredTheNextOnesGoOnAndItCanBeRetried() async throws {
        let refusing = Atomic(true)
        let collector = try ContractCollector { _, records, _ in
            guard refusing.load(ordering: .relaxed), records.contains(where: { $0.payload == "www.nielsen.com/5" }) else { return nil }
            return Self.answer(400, "record 5 is not valid here")
        }
        defer { collector.server.stop() }
        let spool = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: spool) }
        let errors = Mutex<[String]>([])
        let output = try CollectorOutput(collector: collector.url, spoolDirectory: spool, settings: Self.settings,
                                         onError: { message in errors.withLock { $0.append(message) } })
        let sending = Task { await output.run() }
        for index in 0..<5 { output.write(Self.record(index)) }
        try await Self.wait { collector.payloads.count == 5 }
        output.write(Self.record(5))
        try await Self.wait { output.health?.recordsDeadLettered == 1 }
        for index in 6..<10 { output.write(Self.record(index)) }
        await output.finish()
        await sending.value
        let delivered: [String] = Self.names(0..<5) + Self.names(6..<10)
        #expect(collector.payloads == delivered, "the batches after the refused one went on")
        let letters = SpoolFolder(directory: spool).deadLetters
        #expect(letters.count == 1 && letters.first?.records == 1)
        #expect(letters.first?.reason?.contains("the collector answered 400: record 5 is not valid here") == true, "\(letters)")
        let said = errors.withLock { $0 }
        #expect(said.contains { $0.contains("moved to the spool's dead-letter folder") }, "\(said)")

        let listed = try Command.run(["spool", "list", "--spool", spool.path])
        #expect(listed.status == 0 && listed.stdout.contains("1 dead letter") && listed.stdout.contains("record 5 is not valid here"),
                "\(listed.stdout)")
        let unknown = try Command.run(["spool", "drop", "no-such-batch", "--spool", spool.path])
        #expect(unknown.status == 1 && unknown.stderr.contains("no dead letter named no-such-batch"), "\(unknown.stderr)")

        // The operator fixes the collector and puts the letter back: the next run sends it.
        refusing.store(false, ordering: .relaxed)
        #expect(try SpoolFolder(directory: spool).retry([]) == [letters[0].name])
        let again = try CollectorOutput(collector: collector.url, spoolDirectory: spool, settings: Self.settings)
        await again.finish()
        #expect(collector.payloads.sorted() == Self.names(0..<10).sorted())
        #expect(SpoolFolder(directory: spool).deadLetters.isEmpty && SpoolFolder(directory: spool).pending.isEmpty)
    }

    /// 413 above 2,500 bytes: the batch is halved until its parts fit; a single record that is
    /// still too large is dead-lettered. Every other record arrives once, in order.
    @Test func aTooLargeBatchIsSplitDownToSingleRecords() async throws {
        let collector = try ContractCollector { _, _, body in body > 2_500 ? Self.answer(413) : nil }
        defer { collector.server.stop() }
        let spool = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: spool) }
        let output = try CollectorOutput(collector: collector.url, spoolDirectory: spool, settings: Self.settings)
        for index in 0..<12 { output.write(Self.record(index, padding: 300)) }
        output.write(Self.record(12, padding: 3_000))
        for index in 13..<16 { output.write(Self.record(index, padding: 300)) }
        await output.finish()
        let fitting: [String] = Self.names(0..<12, padding: 300) + Self.names(13..<16, padding: 300)
        #expect(collector.payloads == fitting)
        let keys = collector.seen.withLock { Array($0.accepted.keys) }
        #expect(!keys.isEmpty && keys.allSatisfy { $0.contains("batch-000000000001.") }, "the parts keep the batch's id: \(keys)")
        #expect(SpoolFolder(directory: spool).deadLetters.map(\.records) == [1])
        #expect(output.health?.recordsDeadLettered == 1)
    }

    /// A 307 to another host (127.0.0.2 stands for one) is followed; the batch is accepted there.
    @Test func aRedirectToAnotherHostIsFollowed() async throws {
        let target = try ContractCollector(host: "127.0.0.2")
        defer { target.server.stop() }
        let first = try LocalHTTPServer { _ in Self.answer(307, headers: ["Location": target.url.absoluteString]) }
        defer { first.stop() }
        let spool = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: spool) }
        let output = try CollectorOutput(collector: URL(string: first.url("collect"))!, spoolDirectory: spool, settings: Self.settings)
        for index in 0..<5 { output.write(Self.record(index)) }
        await output.finish()
        #expect(target.payloads == Self.names(0..<5))
        #expect(first.requests.count == 1)
        #expect(SpoolFolder(directory: spool).pending.isEmpty)
    }

    /// An answer that comes after the client gave up, and a connection closed before the
    /// answer's end: both batches had reached the collector, are sent again under the same
    /// key, and the collector keeps one copy.
    @Test func aLateOrCutAnswerIsRetriedUnderTheSameKey() async throws {
        let posts = Atomic(0)
        let collector = try ContractCollector { _, _, _ in
            let post = posts.add(1, ordering: .relaxed).newValue
            if post == 1 { Thread.sleep(forTimeInterval: 1.5) }
            return post == 2 ? LocalHTTPServer.Response(status: 200, length: .claimed(100)) : nil
        }
        defer { collector.server.stop() }
        let spool = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: spool) }
        var settings = Self.settings
        settings.requestTimeout = .seconds(0.5)
        settings.finishTimeout = .seconds(10)
        let output = try CollectorOutput(collector: collector.url, spoolDirectory: spool, settings: settings)
        for index in 0..<5 { output.write(Self.record(index)) }
        await output.finish()
        let sent = collector.seen.withLock { $0.posts.map(\.key) }
        #expect(sent.count >= 3 && Set(sent).count == 1, "one batch, sent again under its key: \(sent)")
        #expect(collector.payloads == Self.names(0..<5), "kept once")
    }

    /// 429 with `Retry-After: 1`: the next try waits at least a second, not the 50 ms backoff.
    @Test func retryAfterIsHonoured() async throws {
        let posts = Atomic(0)
        let collector = try ContractCollector { _, _, _ in
            posts.add(1, ordering: .relaxed).newValue == 1 ? Self.answer(429, headers: ["Retry-After": "1"]) : nil
        }
        defer { collector.server.stop() }
        let spool = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: spool) }
        let output = try CollectorOutput(collector: collector.url, spoolDirectory: spool, settings: Self.settings)
        let sending = Task { await output.run() }
        for index in 0..<3 { output.write(Self.record(index)) }
        try await Self.wait { collector.payloads.count == 3 }
        await output.finish()
        await sending.value
        let times = collector.seen.withLock { $0.posts.map(\.at) }
        #expect(times.count == 2)
        #expect(times[0].duration(to: times[1]) >= .seconds(1))
    }

    /// `Retry-After` as an HTTP date, and values that are not one.
    @Test func retryAfterValues() {
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(HTTPTransport.retryAfter("Sun, 06 Nov 1994 08:49:57 GMT", now: now) == 20)
        #expect(HTTPTransport.retryAfter("120", now: now) == 120)
        #expect(HTTPTransport.retryAfter("99999", now: now) == 3_600)
        let odd: [String] = ["", "-5", "nan", "Sun, 06 Nov 1994 08:49:57 PST", "Sun, 99 Nov 1994 08:49:57 GMT", "soon", "1e400"]
        for value in odd {
            #expect(HTTPTransport.retryAfter(value, now: now) == nil, "\(value)")
        }
    }

    /// A spool at its size limit (and a collector down) holds records in memory and sends them
    /// from there, in order; past the memory bound the oldest are dropped, counted and said.
    @Test func aFullSpoolHoldsInMemoryThenDropsTheOldestAndSaysSo() async throws {
        let collector = try ContractCollector()
        defer { collector.server.stop() }
        let spool = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: spool) }
        var settings = Self.settings
        settings.spoolMaximumBytes = 4_096
        settings.memoryLimit = 8_000
        let output = try CollectorOutput(collector: collector.url, spoolDirectory: spool, settings: settings)
        for index in 0..<60 { output.write(Self.record(index, padding: 200)) }
        let health = try #require(output.health)
        #expect(health.failure?.contains("--spool-max-size") == true)
        let notices = output.takeNotices()
        #expect(notices.first?.alert?.name == "output_write_failing" && notices.first?.alert?.active == true)
        let loss = try #require(notices.losses.first)
        let lost = loss.records
        #expect(lost == health.recordsLost && lost > 0)
        await output.finish()
        let onDisk: Int = 60 - lost - health.recordsHeld
        #expect(onDisk > 0 && onDisk * 200 < 4_096, "the spool took what fits its 4 KB")
        let spooled: [String] = Self.names(0..<onDisk, padding: 200)
        let newest: [String] = Self.names((onDisk + lost)..<60, padding: 200)
        #expect(collector.payloads == spooled + newest, "the spooled records, then the newest held in memory; the oldest held were dropped")
        let first: Double = 1_000 + Double(onDisk)
        let last: Double = first + Double(lost - 1)
        #expect(loss.from == first && loss.to == last)
    }

    /// `id3-meter spool drop` deletes the dead letters and says how many records are gone for good.
    @Test func droppingDeadLettersSaysWhatIsLost() throws {
        let spool = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: spool) }
        let letters = spool.appendingPathComponent("dead-letter")
        try FileManager.default.createDirectory(at: letters, withIntermediateDirectories: true)
        try "{\"type\":\"event\"}\n{\"type\":\"event\"}\n".write(to: letters.appendingPathComponent("batch-000000000007.jsonl"),
                                                            atomically: true, encoding: .utf8)
        try "the collector answered 422\n".write(to: letters.appendingPathComponent("batch-000000000007.reason"), atomically: true, encoding: .utf8)
        let dropped = try Command.run(["spool", "drop", "--spool", spool.path])
        #expect(dropped.status == 0)
        #expect(dropped.stdout == "1 dead letter deleted: 2 records will never reach the collector\n", "\(dropped.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: letters.path).isEmpty)
    }
}
