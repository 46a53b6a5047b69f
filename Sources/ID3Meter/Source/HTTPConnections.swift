import AsyncHTTPClient
import Dispatch
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The HTTP(S) connections fetches go through: a pool of kept-alive connections on event-loop
/// threads, shared by every segment, reload and stream that uses it.
///
/// A `Fetcher` without one shares the process's (one per idle timeout, never shut down: right
/// for a command that exits). A program that goes on after its fetches makes its own, hands it
/// to its fetchers, and shuts it down when they are done: its sockets close and its threads end.
/// Threads it made are ended by `shutdown()`; a caller's event loops (`eventLoopGroup:`,
/// `client:`) are the caller's to end, after it. As a `Service` in a `ServiceGroup`, it shuts
/// down when the group does.
public final class HTTPConnections: Sendable {
    private let configuration: HTTPClient.Configuration
    /// The event loops the clients run on: `nil` for the process's shared ones.
    private let loops: (any EventLoopGroup)?
    /// Whether `loops` were made here, and so are ended by `shutdown()`.
    private let ownsLoops: Bool
    /// Every request's logger (async-http-client's own tracing of connections and requests).
    let logger: Logger
    /// A client per route (whom it trusts, which proxy), made at its first fetch: connections no
    /// fetch used cost no thread (a scan of local files).
    private let state = Mutex<(clients: [Route: HTTPClient], shutDown: Bool)>(([:], false))

    /// How a request reaches its server: the TLS it speaks and the proxy it goes through. Each
    /// route has its own pool (a connection made for one never carries another's requests).
    struct Route: Hashable, Sendable {
        var tls = Fetcher.TLS()
        var proxy: Fetcher.Proxy.Server?
    }

    /// Connections that wait at most `ioTimeout` seconds to connect or for a byte, on `threads`
    /// event-loop threads of their own, or (`nil`) on the process's shared ones (NIO's, which
    /// an HTTP server in the same process uses too): `shutdown()` then closes the connections and
    /// leaves those threads be.
    public convenience init(ioTimeout: Duration = .seconds(10), threads: Int? = 1, logger: Logger = HTTPConnections.silent) {
        self.init(ioTimeout: ioTimeout, loops: threads.map { MultiThreadedEventLoopGroup(numberOfThreads: min(max($0, 1), 64)) },
                  ownsLoops: true, logger: logger)
    }

    /// Connections on the caller's event loops (a server's, a client's), which `shutdown()`
    /// leaves running: the caller ends them, after it.
    public convenience init(eventLoopGroup: any EventLoopGroup, ioTimeout: Duration = .seconds(10), logger: Logger = HTTPConnections.silent) {
        self.init(ioTimeout: ioTimeout, loops: eventLoopGroup, ownsLoops: false, logger: logger)
    }

    /// Connections on the event loops of the caller's `client`, which stays the caller's (to
    /// shut down, after these). Its own pool is not used: it follows redirects by its own
    /// settings, and every hop of a stream's redirects must be checked against the fetcher's
    /// rules (the host rule, the schemes, the headers kept from another host).
    public convenience init(client: HTTPClient, ioTimeout: Duration = .seconds(10), logger: Logger = HTTPConnections.silent) {
        self.init(eventLoopGroup: client.eventLoopGroup, ioTimeout: ioTimeout, logger: logger)
    }

    /// A logger that writes nothing: the default, as async-http-client's.
    public static let silent = Logger(label: "id3-meter.http", factory: { _ in SwiftLogNoOpLogHandler() })

    private init(ioTimeout: Duration, loops: (any EventLoopGroup)?, ownsLoops: Bool, logger: Logger) {
        self.logger = logger
        let nanoseconds = Self.nanoseconds(ioTimeout.seconds)
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(nanoseconds), read: .nanoseconds(nanoseconds)))
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        // A refused connection is reported at once; `Fetcher.RetryPolicy` decides what is tried again.
        configuration.connectionPool.retryConnectionEstablishment = false
        // No request spans: unset, the client takes the process's tracer (a no-op one here) and
        // still parses every request's URL again and opens a span and a task-local context for
        // it, a thousand times a second over a line-up (docs/PERFORMANCE.md).
        configuration.tracing.tracer = nil
        self.configuration = configuration
        self.loops = loops
        self.ownsLoops = ownsLoops
    }

    /// The client of the direct route with the system's trust; `nil` after `shutdown()`.
    var client: HTTPClient? { try? client(for: Route()) }

    /// The client of `route`, made at its first call; `nil` after `shutdown()`. Throws when
    /// its certificates cannot be read.
    func client(for route: Route) throws(FetchError) -> HTTPClient? {
        if let known = state.withLock({ $0.shutDown ? nil : $0.clients[route] }) { return known }
        var configuration = configuration
        configuration.tlsConfiguration = try route.tls.configuration()
        if let proxy = route.proxy {
            configuration.proxy = .server(host: proxy.host, port: proxy.port,
                                          authorization: proxy.user.map { .basic(username: $0, password: proxy.password ?? "") })
        }
        let loops = self.loops
        return state.withLock { state in
            guard !state.shutDown else { return nil }
            if let client = state.clients[route] { return client }
            let client = HTTPClient(eventLoopGroup: loops ?? HTTPClient.defaultEventLoopGroup, configuration: configuration)
            state.clients[route] = client
            return client
        }
    }

    /// Closes every connection, then ends the threads it made. A fetch through these
    /// connections after this fails.
    public func shutdown() async {
        let clients: [HTTPClient]? = state.withLock { state in
            guard !state.shutDown else { return nil }
            state.shutDown = true
            return Array(state.clients.values)
        }
        guard let clients else { return }
        for client in clients { try? await client.shutdown() }
        if ownsLoops { try? await loops?.shutdownGracefully() }
    }

    /// Released without `shutdown()`: async-http-client and NIO trap in debug builds on a client
    /// or a group released running, so they are shut down here, without waiting.
    deinit {
        let (clients, shutDown) = state.withLock { (Array($0.clients.values), $0.shutDown) }
        guard !shutDown else { return }
        let group = ownsLoops ? loops : nil
        guard !clients.isEmpty else {
            group?.shutdownGracefully(queue: .global()) { _ in }
            return
        }
        let left = Atomic(clients.count)
        for client in clients {
            client.shutdown { _ in
                if left.subtract(1, ordering: .relaxed).newValue == 0 { group?.shutdownGracefully(queue: .global()) { _ in } }
            }
        }
    }

    /// A caller's value may be anything: NaN or infinity would trap in a `TimeAmount`.
    private static func nanoseconds(_ seconds: Double) -> Int64 { Int64(min(max(HTTPTransport.bounded(seconds), 0.001), 1e6) * 1e9) }

    private static let shared = Mutex<[Int64: HTTPConnections]>([:])

    /// The process's connections for `ioTimeout`, on async-http-client's own event loops.
    static func shared(ioTimeout: Double) -> HTTPConnections {
        shared.withLock { connections in
            let key = nanoseconds(ioTimeout)
            if let existing = connections[key] { return existing }
            let made = HTTPConnections(ioTimeout: .seconds(ioTimeout), loops: nil, ownsLoops: false, logger: silent)
            connections[key] = made
            return made
        }
    }
}

extension HTTPConnections: Service {
    /// Waits for the group's graceful shutdown (or cancellation), then shuts down: put it
    /// before the services that fetch through it, so that it ends after them.
    public func run() async {
        try? await gracefulShutdown()
        await shutdown()
    }
}
