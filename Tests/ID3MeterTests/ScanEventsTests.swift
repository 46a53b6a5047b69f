import Foundation
import Testing
import SampleGenerator
@testable import ID3Meter
@testable import ID3MeterCore

/// `TagScanner.events(_:)`: the scan as a sequence, pulled, which a consumer can leave or
/// cancel; and a scanner reused after one of its readings was stopped.
@Suite("Scan events as a sequence", .serialized, .timeLimit(.minutes(1)))
struct ScanEventsTests {
    /// The sequence hands out what the writer planted, as the callback does: on a playlist of
    /// two variants and on a file of more events than the handoff's batches hold ahead.
    @Test(arguments: [("hls/master.m3u8", "hls/expected.jsonl"), ("ts/nielsen.ts", "ts/nielsen.expected.jsonl")])
    func theSequenceHandsOutEveryPlantedFrame(input: String, truth: String) async throws {
        let expected = try Samples.expected(truth)
        var pulled: [MediaEvent] = []
        for await event in TagScanner().events(Samples.path(input)).caught({ .failure($0) }) { pulled.append(event) }
        #expect(pulled.failures.isEmpty)
        #expect(pulled.frames(segmentNames: input.hasSuffix(".m3u8")) == expected.map(FoundFrame.init))
        let called = await Samples.scan(Samples.path(input))
        #expect(pulled.map(String.init(describing:)) == called.map(String.init(describing:)), "the same events as the callback's")
    }

    /// A stream whose server goes on sending after its tags (null packets, about 470 KB/s, for
    /// ever): a reading of it ends only when it is stopped.
    static func quietServer() throws -> LocalHTTPServer {
        let part0 = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Samples.path("spec/hls/part0.ts"))))
        return try LocalHTTPServer { _ in
            LocalHTTPServer.Response(body: part0, length: .none) { send in
                let nulls = (0..<50).flatMap { _ in [0x47, 0x1F, 0xFF, 0x10] + [UInt8](repeating: 0xFF, count: 184) }
                while send(nulls) { Thread.sleep(forTimeInterval: 0.02) }
            }
        }
    }

    /// Waits, up to `seconds`, until `server` has no connection open.
    static func closed(_ server: LocalHTTPServer, within seconds: Double = 10) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while server.openConnections > 0, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return server.openConnections == 0
    }

    @Test func leavingTheLoopEndsTheReading() async throws {
        let server = try Self.quietServer()
        defer { server.stop() }
        var tags = 0
        for await event in TagScanner(fetcher: Fetcher(ioTimeout: .seconds(60))).events(server.url("quiet.ts")).caught({ .failure($0) }) {
            if case .tag = event { tags += 1 }
            if tags == 2 { break }
        }
        #expect(tags == 2)
        #expect(await Self.closed(server), "the reading stopped and closed its connection")
    }

    @Test func cancellingThePullingTaskEndsTheReadingAtOnce() async throws {
        let server = try Self.quietServer()
        defer { server.stop() }
        let expected = try Samples.expected("spec/hls/expected.jsonl").filter { $0.segment == "part0.ts" }.count
        let (tagsRead, tagsSeen) = AsyncStream.makeStream(of: Int.self)
        let pulling = Task {
            var events: [MediaEvent] = []
            for await event in TagScanner(fetcher: Fetcher(ioTimeout: .seconds(60))).events(server.url("quiet.ts")).caught({ .failure($0) }) {
                events.append(event)
                tagsSeen.yield(events.frames().count)
            }
            return events
        }
        // Every tag of the bytes sent is out: the pull now waits on a stream that says nothing.
        for await count in tagsRead where count == expected { break }
        let cancelled = ContinuousClock.now
        pulling.cancel()
        let events = await pulling.value
        #expect(ContinuousClock.now - cancelled < .seconds(5), "not the 60 s I/O timeout")
        #expect(events.frames().count == expected)
        #expect(await Self.closed(server))
    }

    /// A scanner is a value to reuse: stopping one reading (a loop left, a source ended) does not
    /// stop the next reading made from it. (A stopped source used to cancel the scanner's
    /// shared interrupt, and every later local read failed as cancelled.)
    @Test func aReusedScannerReadsAfterAStoppedReading() async throws {
        let server = try Self.quietServer()
        defer { server.stop() }
        let scanner = TagScanner(fetcher: Fetcher(ioTimeout: .seconds(60)))
        for await event in TagSource(input: server.url("quiet.ts"), scanner: scanner).caught({ .failure($0) }) {
            if case .tag = event { break }
        }
        for await event in scanner.events(server.url("quiet.ts")).caught({ .failure($0) }) {
            if case .tag = event { break }
        }
        let expected = try Samples.expected("ts/nielsen.expected.jsonl")
        var pulled: [MediaEvent] = []
        for await event in TagSource(input: Samples.path("ts/nielsen.ts"), scanner: scanner).caught({ .failure($0) }) { pulled.append(event) }
        #expect(pulled.failures.isEmpty, "\(pulled.failures)")
        #expect(pulled.frames() == expected.map(FoundFrame.init))
        var scanned: [MediaEvent] = []
        for await event in scanner.events(Samples.path("ts/nielsen.ts")).caught({ .failure($0) }) { scanned.append(event) }
        #expect(scanned.failures.isEmpty, "\(scanned.failures)")
        #expect(scanned.frames() == expected.map(FoundFrame.init))
        #expect(await Self.closed(server))
    }
}
