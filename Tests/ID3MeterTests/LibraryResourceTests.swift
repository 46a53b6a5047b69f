import Foundation
import Testing
@testable import ID3Meter
import SampleGenerator

/// What the library leaves to its host: its stderr, its threads, its sockets.
// The follower's package is built in the first test that runs it: minutes on a fresh clone.
@Suite("What a library user owns", .serialized, .timeLimit(.minutes(10)))
struct LibraryResourceTests {
    static let example = Command.binary.deletingLastPathComponent().appendingPathComponent("custom-engine-example")

    /// libav writes "[tcp @ 0x...] Connection to tcp://... failed" to stderr through its default
    /// log callback; a program that never heard of `LibAVLog` must not get it, and the failure it
    /// is told of still has libav's reason.
    @Test func libavPrintsNothingUnlessAskedAndItsReasonReachesTheFailure() throws {
        let result = try Command.run(["tcp://127.0.0.1:9"], binary: Self.example)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("tcp @") && !result.stderr.contains("Connection to"), "\(result.stderr)")
        #expect(result.stdout.contains("error: tcp://127.0.0.1:9: cannot open: ") && result.stdout.contains("Connection refused"),
                "\(result.stdout)")
    }

    /// Threads of process `pid` now.
    static func threads(of pid: Int32) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).count
    }

    /// `scan` of `count` tcp streams that connect and then say nothing: the most threads its
    /// process had while every one was connected and waiting, and its stderr.
    static func threadsScanningSilentStreams(_ count: Int, server: LocalHTTPServer) throws -> (threads: Int, stderr: String) {
        let before = server.connections
        let inputs = (0..<count).map { "tcp://127.0.0.1:\(server.port)?n=\($0)" }
        let (process, _, err) = try Command.launch(["scan", "--jobs", "\(count)", "--timeout", "3"] + inputs)
        var most = 0
        let deadline = Date().addingTimeInterval(20)
        // Connected: each read is waiting on its silent socket, as it will until the timeout.
        while server.connections < before + count, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        while process.isRunning, Date() < deadline {
            most = max(most, threads(of: process.processIdentifier))
            Thread.sleep(forTimeInterval: 0.05)
        }
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (most, stderr)
    }

    /// A silent stream is read a short wait at a time on the blocking pool: eight of them take
    /// no more threads than the pool has, where a thread each would have taken eight.
    @Test func silentStreamsShareTheBlockingPool() async throws {
        let server = try LocalHTTPServer { _ in .notFound }   // it waits for a request that never comes
        defer { server.stop() }
        let one = try await offThePool { try Self.threadsScanningSilentStreams(1, server: server) }
        let eight = try await offThePool { try Self.threadsScanningSilentStreams(8, server: server) }
        // Nothing came: each is said to be unopenable once its I/O timeout has passed.
        #expect(one.stderr.components(separatedBy: ": cannot open: Input/output error").count - 1 == 1, "\(one.stderr)")
        #expect(eight.stderr.components(separatedBy: ": cannot open: Input/output error").count - 1 == 8, "\(eight.stderr)")
        #expect(eight.threads - one.threads <= BlockingPool.threads - 1, "1 stream: \(one.threads) threads, 8: \(eight.threads)")
    }

    /// Threads of event loops of this process (NIO names them "NIO-ELT-...").
    static func eventLoopThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.count { ((try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)) ?? "").hasPrefix("NIO-ELT") }
    }

    /// A live follow through connections of its own, cancelled after two tags: once they are shut
    /// down, their threads are gone and the server sees every connection closed.
    @Test func aCancelledFollowLeavesNoThreadOrSocketOnceItsConnectionsAreShutDown() async throws {
        let server = try LiveServer(preroll: 3) { LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 3, startDate: $0) }
        defer { server.stop() }
        let before = (threads: Self.eventLoopThreads(), sockets: server.server.openConnections)
        let connections = HTTPConnections(ioTimeout: .seconds(5), threads: 2)
        var tags = 0
        var during = (threads: 0, sockets: 0)
        for await event in TagSource(input: server.url("master.m3u8"), scanner: TagScanner(fetcher: Fetcher(connections: connections)),
                                     liveStart: 2, clock: ContinuousClock()).caught({ .failure($0) }) {
            guard case .tag = event else { continue }
            tags += 1
            during = (Self.eventLoopThreads(), server.server.openConnections)
            if tags == 2 { break }
        }
        #expect(tags == 2)
        #expect(during.threads == before.threads + 2 && during.sockets > 0, "\(before) -> \(during)")
        await connections.shutdown()
        let deadline = Date().addingTimeInterval(10)
        var after = (threads: Self.eventLoopThreads(), sockets: server.server.openConnections)
        while (after.threads > before.threads || after.sockets > 0) && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
            after = (Self.eventLoopThreads(), server.server.openConnections)
        }
        #expect(after.threads == before.threads && after.sockets == 0, "\(before) -> \(after)")
    }

    /// Examples/ServiceFollower built as the package of its own it is, a backend's: its
    /// manifest resolves id3-meter with the `IO` trait and the swift-server packages it uses
    /// beside it. Built once, in `.build-consumers/`, on what the suite's own build compiled
    /// (scripts/build-consumer.sh: about 40 s from a fresh clone's build, 4 minutes from nothing).
    static let follower: (program: URL?, said: String) = {
        let scratch = Samples.root.appendingPathComponent(".build-consumers/service-follower")
        let script = Samples.root.appendingPathComponent("scripts/build-consumer.sh")
        guard let built = try? Command.run(["Examples/ServiceFollower", scratch.path], binary: script)
        else { return (nil, "scripts/build-consumer.sh did not start") }
        let errors = (built.stdout + built.stderr).split(separator: "\n").filter { $0.contains("error:") }.joined(separator: "\n")
        return (built.status == 0 ? scratch.appendingPathComponent("debug/ServiceFollower") : nil, errors + "\n" + built.stderr.suffix(2_000))
    }()

    /// The follower a backend writes (Examples/ServiceFollower): its own event loops and
    /// `HTTPClient` carry the library's connections, its `Logger` gets the metering's lines, and
    /// the connections and the metering run as Services in its `ServiceGroup`. Ended gracefully
    /// or by cancellation: the engine's session ended, no event-loop thread left (none of the
    /// process's shared ones was ever started), and the server sees every connection closed
    /// while the process still runs.
    @Test(arguments: ["graceful", "cancel"])
    func aFollowerInItsOwnServiceGroupLeavesNothingRunning(ending: String) async throws {
        let server = try LiveServer(preroll: 3) { LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 3, startDate: $0) }
        defer { server.stop() }
        let program = try #require(Self.follower.program, "Examples/ServiceFollower did not build: \(Self.follower.said)")
        // A backend's package, not ours: it resolved what ID3Meter's `IO` trait needs, none of serve's.
        let pins = try String(contentsOf: Samples.root.appendingPathComponent("Examples/ServiceFollower/Package.resolved"), encoding: .utf8)
        let fetched = Set(pins.matches(of: /"identity" : "([^"]+)"/).map { String($0.output.1) })
        #expect(fetched.isSuperset(of: ["async-http-client", "swift-service-lifecycle"]), "\(fetched.sorted())")
        #expect(fetched.isDisjoint(with: ["hummingbird", "yams", "swift-prometheus", "swift-argument-parser"]), "\(fetched.sorted())")
        let process = Process()
        process.executableURL = program
        process.arguments = [server.url("master.m3u8"), "3", ending, "hold"]
        let input = Pipe()
        process.standardInput = input
        let (out, err) = try Relay.run(process)
        Command.watch(process, after: 60)
        // Its log (stderr, a line at a time) says when the metering has ended; its stdout comes
        // at exit.
        var log = ""
        while !log.contains("metering ended"), case let chunk = err.fileHandleForReading.availableData, !chunk.isEmpty {
            log += String(decoding: chunk, as: UTF8.self)
        }
        // Still running, everything shut down: the server's side of every connection is closed.
        let deadline = Date().addingTimeInterval(10)
        while server.server.openConnections > 0 && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let open = server.server.openConnections
        #expect(process.isRunning, "it waits for a line before exiting")
        try? input.fileHandleForWriting.write(contentsOf: Data("\n".utf8))
        let lines = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").map(String.init)
        log += String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(log)")
        #expect(lines.contains { $0.hasPrefix("tags: ") && (Int($0.dropFirst(6)) ?? 0) >= 3 }, "\(lines)")
        #expect(lines.contains("ended: true"), "\(lines)")
        #expect(lines.contains("event-loop threads: 1 while metering, 0 after"), "\(lines)")
        #expect(open == 0, "\(open) connections still open at the server")
        #expect(log.contains("metering") && log.contains("input=\(server.url("master.m3u8"))") && log.contains("metering ended"), "\(log)")
    }

    /// Threads of the blocking pool (NIO's thread pools name theirs "TP-#...").
    static func poolThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.count { ((try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)) ?? "").hasPrefix("TP-#") }
    }

    /// A read through libav (a tcp stream nobody answers) starts the blocking pool's threads;
    /// `BlockingPool.shutdown()` ends them, and the next read starts them again.
    @Test func theBlockingPoolStopsWhenItsOwnerSaysAndStartsAgain() async throws {
        await BlockingPool.shutdown()
        let before = Self.poolThreads()
        func readOnce() async -> Int {
            var failures = 0
            for await event in TagSource(input: "tcp://127.0.0.1:9", clock: ContinuousClock()).caught({ .failure($0) }) {
                if case .failure = event { failures += 1 }
            }
            return failures
        }
        #expect(await readOnce() == 1)
        #expect(Self.poolThreads() == before + BlockingPool.threads, "\(Self.poolThreads()) threads, \(before) before")
        await BlockingPool.shutdown()
        let deadline = Date().addingTimeInterval(10)
        while Self.poolThreads() > before && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(Self.poolThreads() == before)
        #expect(await readOnce() == 1, "a read after the shutdown starts the pool again")
        #expect(Self.poolThreads() == before + BlockingPool.threads)
    }

    /// Connections dropped without `shutdown()` (async-http-client traps in a debug build on a
    /// client released running) are shut down as they go: no crash, and their threads end.
    @Test func connectionsReleasedWithoutShutdownEndTheirThreads() async throws {
        let server = try LocalHTTPServer(serving: Samples.folder)
        defer { server.stop() }
        let before = Self.eventLoopThreads()
        do {
            let connections = HTTPConnections(ioTimeout: .seconds(5), threads: 2)
            let bytes = try await Fetcher(connections: connections).fetch(server.url("hls/master.m3u8"), as: .playlist)
            #expect(!bytes.isEmpty)
            #expect(Self.eventLoopThreads() == before + 2)
        }
        let deadline = Date().addingTimeInterval(10)
        while Self.eventLoopThreads() > before && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(Self.eventLoopThreads() == before)
    }

    /// Unset, the client would take the process's tracer and open a span for every request (a
    /// no-op one when none is bootstrapped, still about 3 KB a channel and a few percent of
    /// `serve`'s CPU at 1,000 channels, docs/PERFORMANCE.md). Every route's client has none.
    @Test func theClientsOpenNoRequestSpans() async throws {
        let connections = HTTPConnections(ioTimeout: .seconds(5), threads: 1)
        let direct = try #require(connections.client)
        let proxied = try #require(try connections.client(for: .init(proxy: Fetcher.Proxy.Server("127.0.0.2:9"))))
        #expect(direct.tracer == nil)
        #expect(proxied.tracer == nil)
        await connections.shutdown()
    }
}
