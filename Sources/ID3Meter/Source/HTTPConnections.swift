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
    private let configuration: HTTPClient.Configuration
    private let group: MultiThreadedEventLoopGroup?
    /// Made at the first fetch: connections no fetch used cost no thread (a scan of local files).
    private let state = Mutex<(client: HTTPClient?, shutDown: Bool)>((nil, false))

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
        self.configuration = configuration
        self.group = group
    }

    /// The client, made at the first call; `nil` after `shutdown()`.
    var client: HTTPClient? {
        state.withLock { state in
            guard !state.shutDown else { return nil }
            if let client = state.client { return client }
            let client = HTTPClient(eventLoopGroup: group ?? HTTPClient.defaultEventLoopGroup, configuration: configuration)
            state.client = client
            return client
        }
    }

    /// Closes every connection, then ends the threads. A fetch through these connections after
    /// this fails.
    public func shutdown() async {
        let client: HTTPClient?? = state.withLock { state in
            guard !state.shutDown else { return .none }
            state.shutDown = true
            return .some(state.client)
        }
        guard case .some(let made) = client else { return }
        try? await made?.shutdown()
        try? await group?.shutdownGracefully()
    }

    /// Released without `shutdown()`: async-http-client and NIO trap in debug builds on a client
    /// or a group released running, so they are shut down here, without waiting.
    deinit {
        let (client, shutDown) = state.withLock { ($0.client, $0.shutDown) }
        guard !shutDown else { return }
        let group = group
        guard let client else {
            group?.shutdownGracefully(queue: .global()) { _ in }
            return
        }
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
