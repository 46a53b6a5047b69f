import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// A collector that can be taken down and brought back, and keeps every batch it accepted.
final class TestCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var up = true
    private var accepted: [String: [MeterRecord.Decoded]] = [:]
    private var postCount = 0
    private var recordCount = 0
    private var received = 0
    private var delay = 0.0
    private(set) var server: LocalHTTPServer!

    init() throws {
        server = try LocalHTTPServer { [unowned self] request in respond(to: request) }
    }

    private func respond(to request: LocalHTTPServer.Request) -> LocalHTTPServer.Response {
        let delay = lock.withLock {
            received += 1
            return self.delay
        }
        // A slow collector: the batch is in flight this long before it is taken.
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        return lock.withLock {
            postCount += 1
            guard up, request.method == "POST",
                  let body = try? JSONDecoder().decode(MeterRecord.Batch.self, from: Data(request.body)) else {
                return LocalHTTPServer.Response(status: 503)
            }
            // Keyed by batch id: a batch sent twice is counted once, as a collector should.
            accepted[body.batch] = body.records
            recordCount += body.records.count
            return LocalHTTPServer.Response(status: 204)
        }
    }

    var isUp: Bool {
        get { lock.withLock { up } }
        set { lock.withLock { up = newValue } }
    }

    var batches: [String: [MeterRecord.Decoded]] { lock.withLock { accepted } }
    var posts: Int { lock.withLock { postCount } }
    /// POSTs that have arrived, answered or not yet.
    var postsReceived: Int { lock.withLock { received } }
    /// Seconds each answer waits.
    var answerDelay: Double {
        get { lock.withLock { delay } }
        set { lock.withLock { delay = newValue } }
    }
    /// Records in every accepted POST, a resent batch counted again.
    var recordsPosted: Int { lock.withLock { recordCount } }
    var url: URL { URL(string: server.url("collect"))! }
}

extension MeterRecord {
    struct Decoded: Decodable, Equatable {
        var payload: String?
        var pts: Int64?
        var channel: String?
        var type: String?
        var tagID: String?
        var meter: String?
        var mediaSequence: Int?

        enum CodingKeys: String, CodingKey {
            case payload, pts, channel, type, meter
            case tagID = "tag_id"
            case mediaSequence = "media_sequence"
        }
    }
    struct Batch: Decodable { var batch: String; var records: [Decoded] }
}

@Suite("HTTP collector with a spool", .serialized, .timeLimit(.minutes(3)))
struct CollectorOutputTests {
    static var settings: CollectorOutput.Settings {
        var settings = CollectorOutput.Settings()
        settings.batchInterval = .milliseconds(50)
        settings.firstRetryDelay = .milliseconds(50)
        settings.maximumRetryDelay = .milliseconds(200)
        settings.finishTimeout = .seconds(3)
        return settings
    }

    static func record(_ index: Int) -> MeterRecord {
        .delivery("www.nielsen.com/\(index)", context: TagContext(pts: Int64(index), origin: TagOrigin(source: "s"), programDateTime: nil),
                  at: Date(timeIntervalSince1970: 1_000))
    }

    static func received(_ collector: TestCollector) -> [String] {
        collector.batches.sorted { $0.key < $1.key }.flatMap { $0.value.compactMap(\.payload) }
    }

    /// `finish()` while a batch is on its way: the send is not cut off part way, so the batch
    /// the collector took is not sent again (a collector that keeps no Idempotency-Keys would
    /// count its records twice).
    @Test func aBatchInFlightAtFinishIsNotSentAgain() async throws {
        let collector = try TestCollector()
        defer { collector.server.stop() }
        collector.answerDelay = 0.5
        let spool = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: spool) }
        let output = try CollectorOutput(collector: collector.url, spoolDirectory: spool, settings: Self.settings)
        let sending = Task { await output.run() }
        for index in 0..<5 { output.write(Self.record(index)) }
        let deadline = Date().addingTimeInterval(10)
        while collector.postsReceived == 0, Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(collector.postsReceived == 1, "a batch is on its way")
        await output.finish()
        await sending.value
        #expect(Self.received(collector) == (0..<5).map { "www.nielsen.com/\($0)" })
        #expect(collector.recordsPosted == 5, "the batch in flight was not sent again")
    }

    @Test func anOutageLosesNothingAndDoublesNothing() async throws {
        let collector = try TestCollector()
        defer { collector.server.stop() }
        let spool = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: spool) }
        let output = try CollectorOutput(collector: collector.url, spoolDirectory: spool, settings: Self.settings)
        let sending = Task { await output.run() }
        for index in 0..<10 { output.write(Self.record(index)) }
        try await Task.sleep(for: .milliseconds(200))
        collector.isUp = false
        for index in 10..<30 {
            output.write(Self.record(index))
            try await Task.sleep(for: .milliseconds(10))
        }
        let failedPosts = collector.posts
        try await Task.sleep(for: .milliseconds(300))
        #expect(collector.posts > failedPosts, "it kept retrying while the collector was down")
        collector.isUp = true
        for index in 30..<40 { output.write(Self.record(index)) }
        await output.finish()
        await sending.value
        #expect(Self.received(collector) == (0..<40).map { "www.nielsen.com/\($0)" })
        #expect(collector.recordsPosted == 40, "no batch was sent twice")
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.path).sorted() == ["last-batch", "spool-id"])
    }

    /// A run after one that emptied the spool numbers its batches on: a collector that drops a
    /// repeated batch id would otherwise drop the new run's records.
    @Test func aLaterRunNeverReusesABatchId() async throws {
        let collector = try TestCollector()
        defer { collector.server.stop() }
        let spool = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: spool) }
        for run in 0..<2 {
            let output = try CollectorOutput(collector: collector.url, spoolDirectory: spool, settings: Self.settings)
            for index in (run * 3)..<(run * 3 + 3) { output.write(Self.record(index)) }
            await output.finish()
        }
        #expect(collector.batches.count == 2)
        #expect(Self.received(collector) == (0..<6).map { "www.nielsen.com/\($0)" })
    }

    @Test func whatAKilledRunLeftIsSentOnTheNextStart() async throws {
        let collector = try TestCollector()
        defer { collector.server.stop() }
        collector.isUp = false
        let spool = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: spool) }
        var settings = Self.settings
        settings.finishTimeout = .milliseconds(100)
        let first = try CollectorOutput(collector: collector.url, spoolDirectory: spool, settings: settings)
        let sending = Task { await first.run() }
        for index in 0..<5 { first.write(Self.record(index)) }
        await first.finish()
        await sending.value
        // A run killed mid-batch leaves its open file behind, as the kernel had it.
        let encoder = JSONEncoder()
        let killed = try (5..<8).map { String(decoding: try encoder.encode(Self.record($0)), as: UTF8.self) }.joined(separator: "\n") + "\n"
        try killed.write(to: spool.appendingPathComponent("open.jsonl"), atomically: true, encoding: .utf8)
        #expect(collector.batches.isEmpty)

        collector.isUp = true
        // Without `run()`: `finish()` alone sends what the spool holds.
        let second = try CollectorOutput(collector: collector.url, spoolDirectory: spool, settings: Self.settings)
        second.write(Self.record(8))
        await second.finish()
        #expect(Self.received(collector) == (0..<9).map { "www.nielsen.com/\($0)" })
    }
}
