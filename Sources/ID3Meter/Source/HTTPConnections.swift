import AsyncHTTPClient
import Dispatch
import NIOCore
import NIOPosix
import Synchronization

/// The HTTP(S) connections fetches go through: a pool of kept-alive connections on event-loop
/// threads, shared by every segment, reload and stream that uses it.
///
/// A `Fetcher` without one shares the process's (one per idle timeout, never shut down: right
/// for a command that exits). A program that goes on after its fetches makes its own, hands it
/// to its fetchers, and shuts it down when they are done: its sockets close and its threads end.
public final class HTTPConnections: Sendable {
    let client: HTTPClient
    private let group: MultiThreadedEventLoopGroup?

    /// Connections that wait at most `ioTimeout` seconds to connect or for a byte, on `threads`
    /// event-loop threads of their own, or (`nil`) on the process's shared ones (NIO's, which
    /// an HTTP server in the same process uses too): `shutdown()` then closes the connections and
    /// leaves those threads be.
    public convenience init(ioTimeout: Double = 10, threads: Int? = 1) {
        self.init(ioTimeout: ioTimeout, group: threads.map { MultiThreadedEventLoopGroup(numberOfThreads: min(max($0, 1), 64)) })
    }

    private init(ioTimeout: Double, group: MultiThreadedEventLoopGroup?) {
        let nanoseconds = Self.nanoseconds(ioTimeout)
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(nanoseconds), read: .nanoseconds(nanoseconds)))
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        // A refused connection is reported at once; `Fetcher.RetryPolicy` decides what is tried again.
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroup: group ?? HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.group = group
    }

    /// Closes every connection, then ends the threads. A fetch through these connections after
    /// this fails.
    public func shutdown() async {
        let first = shutDown.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        try? await client.shutdown()
        try? await group?.shutdownGracefully()
    }

    private let shutDown = Mutex(false)

    /// Released without `shutdown()`: async-http-client and NIO trap in debug builds on a client
    /// or a group released running, so they are shut down here, without waiting.
    deinit {
        guard !shutDown.withLock({ $0 }) else { return }
        let group = group
        client.shutdown { _ in group?.shutdownGracefully(queue: .global()) { _ in } }
    }

    /// A caller's value may be anything: NaN or infinity would trap in a `TimeAmount`.
    private static func nanoseconds(_ seconds: Double) -> Int64 { Int64(min(max(HTTPTransport.bounded(seconds), 0.001), 1e6) * 1e9) }

    private static let shared = Mutex<[Int64: HTTPConnections]>([:])

    /// The process's connections for `ioTimeout`, on async-http-client's own event loops.
    static func shared(ioTimeout: Double) -> HTTPConnections {
        shared.withLock { connections in
            let key = nanoseconds(ioTimeout)
            if let existing = connections[key] { return existing }
            let made = HTTPConnections(ioTimeout: ioTimeout, group: nil)
            connections[key] = made
            return made
        }
    }
}
