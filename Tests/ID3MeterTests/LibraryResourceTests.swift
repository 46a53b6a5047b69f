import Foundation
import Testing
@testable import ID3Meter
import SampleGenerator

/// What the library leaves to its host: its stderr, its threads, its sockets.
@Suite("What a library user owns", .serialized, .timeLimit(.minutes(2)))
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
        let connections = HTTPConnections(ioTimeout: 5, threads: 2)
        var tags = 0
        var during = (threads: 0, sockets: 0)
        for await event in TagSource(input: server.url("master.m3u8"), scanner: Scanner(fetcher: Fetcher(connections: connections)),
                                     liveStart: 2, clock: ContinuousClock()) {
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

    /// Connections dropped without `shutdown()` (async-http-client traps in a debug build on a
    /// client released running) are shut down as they go: no crash, and their threads end.
    @Test func connectionsReleasedWithoutShutdownEndTheirThreads() async throws {
        let server = try LocalHTTPServer(serving: Samples.folder)
        defer { server.stop() }
        let before = Self.eventLoopThreads()
        do {
            let connections = HTTPConnections(ioTimeout: 5, threads: 2)
            let bytes = try await Fetcher(connections: connections).fetch(server.url("hls/master.m3u8"), as: .playlist)
            #expect(!bytes.isEmpty)
            #expect(Self.eventLoopThreads() == before + 2)
        }
        let deadline = Date().addingTimeInterval(10)
        while Self.eventLoopThreads() > before && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(Self.eventLoopThreads() == before)
    }
}
