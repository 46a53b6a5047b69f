// A backend following a live stream inside its own ServiceGroup, through its own HTTPClient,
// logging on its own Logger, then shutting everything down.
//
//   swift run --package-path Examples/ServiceFollower ServiceFollower URL [TAGS] [graceful|cancel] [hold]
//
// A package of its own, as a backend's is (Examples/ServiceFollower/Package.swift).
//
// It meters until its engine has TAGS tags (default 3), then ends the group, gracefully or by
// cancelling its task; then it shuts down its client and its event loops, and says how many
// event-loop threads the process still has: none, if nothing it made is left running. With
// `hold`, it then waits for a line on stdin before exiting, so that its server can count the
// connections still open.
import AsyncHTTPClient
import FoundationEssentials
import ID3Meter
import Logging
import NIOPosix
import ServiceLifecycle

/// Counts what a backend's client of the Nielsen SDK would forward, and says when enough came.
actor CountingEngine: MeteringEngine {
    private(set) var tags = 0
    private(set) var ended = false
    private let wanted: Int
    private var enough: CheckedContinuation<Void, Never>?

    init(wanted: Int) { self.wanted = wanted }

    func play(channelName: String) {}
    func loadMetadata(_ json: String) {}
    func sendID3(_ payload: String, context: TagContext) {
        tags += 1
        if tags >= wanted { enough?.resume(); enough = nil }
    }
    func playheadPosition(_ position: Int64) {}
    func stop() {}
    func end() { ended = true }

    /// Returns once `wanted` tags have been sent.
    func waitForEnough() async {
        guard tags < wanted else { return }
        await withCheckedContinuation { enough = $0 }
    }
}

/// Event-loop threads of this process (NIO names them "NIO-ELT-...").
func eventLoopThreads() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.count { task in
        let name = FileManager.default.contents(atPath: "/proc/self/task/\(task)/comm").map { String(decoding: $0, as: UTF8.self) }
        return name?.hasPrefix("NIO-ELT") == true
    }
}

let arguments = CommandLine.arguments.dropFirst()
let input = arguments.first ?? "http://127.0.0.1:8080/master.m3u8"
let wanted = arguments.dropFirst().first.flatMap { Int($0) } ?? 3
let cancelling = arguments.dropFirst(2).first == "cancel"

var logger = Logger(label: "follower")
logger.logLevel = .info

// The backend's own event loops and client: the library's connections run on them.
let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let client = HTTPClient(eventLoopGroup: loops)
let connections = HTTPConnections(client: client, logger: logger)
let engine = CountingEngine(wanted: wanted)
let meter = StreamMeter(input: input, session: MeteringSession(channelName: "follower"),
                        scanner: TagScanner(fetcher: Fetcher(connections: connections)))
// The connections first: a group shuts its services down in reverse order, so they end last.
let group = ServiceGroup(services: [connections, MeteringService(meter, engine: engine, logger: logger)], logger: logger)

let running = Task { try await group.run() }
await engine.waitForEnough()
let during = eventLoopThreads()
if cancelling { running.cancel() } else { await group.triggerGracefulShutdown() }
// A cancelled group ends with the cancellation as its error; a graceful one without.
if case .failure(let error) = await running.result, !(cancelling && error is CancellationError) { throw error }
try await client.shutdown().get()
try await loops.shutdownGracefully()

print("tags: \(await engine.tags)")
print("ended: \(await engine.ended)")
print("event-loop threads: \(during) while metering, \(eventLoopThreads()) after")
if arguments.dropFirst(3).first == "hold" { _ = readLine() }
