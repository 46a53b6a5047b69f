import struct Foundation.Date

/// Reads resources (playlists, segments, keys, initialisation sections, whole inputs) within
/// `Fetcher.Limits`: each fetch has a byte limit and an overall deadline besides the idle timeout.
/// HTTP(S) goes through a pooled async client (`HTTPTransport`), local files are read
/// directly, and the streams only libavformat speaks (udp, srt, rtp, tcp) through the shim.
public struct Fetcher: Sendable {
    /// How often a failed network fetch is tried again, and how long to wait between tries.
    public struct RetryPolicy: Sendable {
        public var attempts: Int
        public var firstDelay: Duration
        public var maximumDelay: Duration

        /// `attempts` tries in all, waiting `firstDelay` after the first failure, doubling up
        /// to `maximumDelay`.
        public init(attempts: Int = 4, firstDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(4)) {
            self.attempts = attempts
            self.firstDelay = firstDelay
            self.maximumDelay = maximumDelay
        }

        /// One attempt, no retry.
        public static let none = RetryPolicy(attempts: 1)

        var backoff: Backoff {
            Backoff(first: .seconds(HTTPTransport.bounded(firstDelay.seconds)), maximum: .seconds(HTTPTransport.bounded(maximumDelay.seconds)))
        }
    }

    /// How long without a byte before a read gives up (`--timeout`).
    public var ioTimeout: Duration
    /// Cancels what libavformat is reading for this fetcher (udp, srt, probes): a blocking read
    /// does not see its task's cancellation, so the task's owner cancels this too.
    package var interrupt = Interrupt()
    /// How a failed fetch of a network resource is tried again.
    public var retry: RetryPolicy
    /// How many bytes and how long each kind of fetch may take.
    public var limits: Fetcher.Limits
    /// Sent with every HTTP request (`--header`).
    public var headers: [Fetcher.Header]
    /// Where HTTP requests may go, checked at every request and redirect hop (a channel added
    /// over `serve`'s API); `nil`: anywhere.
    public var hostRule: Fetcher.HostRule?

    /// The HTTP connections to fetch through; `nil`: the process's, shared and never shut down.
    public var connections: HTTPConnections?

    /// The cookies of the player session this fetcher reads for: every copy of it shares them.
    /// `nil` keeps none; `TagScanner` and `TagSource` give each input a jar of its own (`session()`).
    package var cookies: CookieJar?

    /// Whom HTTPS connections trust, and the client certificate they present (`--ca-file`,
    /// `SSL_CERT_FILE`, `--client-cert`).
    public var tls = TLS()
    /// The forward proxy, if any (`https_proxy`, `http_proxy`, `no_proxy`, `--proxy`).
    public var proxy: Proxy?

    /// The defaults are the command line's: 10 s without a byte, four tries, the size limits of `Fetcher.Limits`.
    public init(ioTimeout: Duration = .seconds(10), retry: RetryPolicy = RetryPolicy(),
                limits: Fetcher.Limits = Fetcher.Limits(), headers: [Fetcher.Header] = [], connections: HTTPConnections? = nil) {
        self.connections = connections
        self.ioTimeout = ioTimeout
        self.retry = retry
        self.limits = limits
        self.headers = headers
    }

    /// This fetcher for a new player session: a cookie jar of its own, shared by its copies, and
    /// an interrupt of its own that this fetcher's cancels too.
    package func session() -> Fetcher {
        var fetcher = self
        fetcher.cookies = CookieJar()
        fetcher.interrupt = interrupt.child()
        return fetcher
    }

    /// Hands `location`'s bytes to `consume` as they arrive. A network resource that fails (a 404
    /// at a live edge, a 503, a stalled or refused connection) is read again from the start after
    /// a backoff, `restart` being called first so that the consumer drops what it had; with
    /// `retrying` off, and for local files, there is one attempt. `afterEachChunk` is awaited
    /// once a chunk is consumed: where a consumer that hands a chunk's events on waits for room,
    /// the read waiting with it (a stream's server told so by TCP's window).
    /// Returns where the bytes came from, after redirects.
    @discardableResult
    package func read(_ location: String, range: ByteRange? = nil, as resource: Fetcher.Limits.Resource, targetDuration: Double? = nil,
                     retrying: Bool = true, restart: () -> Void = {}, afterEachChunk: () async -> Void = {},
                     consume: (UnsafeBufferPointer<UInt8>) -> Void) async throws(FetchFailure) -> String {
        let network = Location.transport(of: location) != .file
        let attempts = retrying && network ? max(retry.attempts, 1) : 1
        for attempt in 1...attempts {
            if attempt > 1 { restart() }
            do {
                return try await readOnce(location, range: range, as: resource, targetDuration: targetDuration,
                                          afterEachChunk: afterEachChunk, consume: consume)
            } catch {
                guard error.isWorthRetrying, attempt < attempts, (try? await Task.sleep(for: retry.backoff.delay(after: attempt))) != nil,
                      !interrupt.isCancelled else {
                    throw FetchFailure(error: Task.isCancelled ? .cancelled : error, attempts: attempt)
                }
            }
        }
        return location
    }

    /// The whole resource: for what is parsed whole (playlists, keys, initialisation sections).
    package func fetch(_ location: String, range: ByteRange? = nil, as resource: Fetcher.Limits.Resource, targetDuration: Double? = nil,
                      retrying: Bool = true) async throws(FetchFailure) -> [UInt8] {
        try await fetchDocument(location, range: range, as: resource, targetDuration: targetDuration, retrying: retrying).bytes
    }

    /// The whole resource and where it came from after redirects (`location`), which its relative
    /// references are resolved against: a playlist's, an MPD's.
    package func fetchDocument(_ location: String, range: ByteRange? = nil, as resource: Fetcher.Limits.Resource, targetDuration: Double? = nil,
                              retrying: Bool = true) async throws(FetchFailure) -> (bytes: [UInt8], location: String) {
        var bytes: [UInt8] = []
        let final = try await read(location, range: range, as: resource, targetDuration: targetDuration, retrying: retrying,
                                   restart: { bytes.removeAll() }) { bytes.append(contentsOf: $0) }
        return (bytes, final)
    }

    private static let chunkSize = 256 << 10

    private var transport: HTTPTransport {
        HTTPTransport(ioTimeout: ioTimeout.seconds, headers: headers, hostRule: hostRule, connections: connections ?? .shared(ioTimeout: ioTimeout.seconds),
                      cookies: cookies, tls: tls, proxy: proxy)
    }

    /// What `location` says it is before it is read: its first `length` bytes (fewer when it is
    /// shorter) and, over HTTP, the `Content-Type` it was sent with. One attempt.
    package func peek(_ location: String, length: Int = MediaForm.sniffLength) async throws(FetchFailure) -> (contentType: String?, prefix: [UInt8]) {
        var prefix: [UInt8] = []
        do throws(FetchError) {
            switch Location.transport(of: location) {
            case .http:
                let deadline = limits.deadline(for: .playlist, targetDuration: nil)
                let answer = try await transport.read(location, range: nil, limit: .max, resource: .input, deadline: deadline, prefix: length,
                                                      afterEachChunk: {}) { prefix.append(contentsOf: $0) }
                return (answer.contentType, prefix)
            case .file:
                var file = try LocalFile(location, range: nil, limit: .max, resource: .input)
                while prefix.count < length, let chunk = try file.next(interrupt: interrupt) { prefix.append(contentsOf: chunk.prefix(length - prefix.count)) }
                return (nil, prefix)
            case .stream:
                return (nil, [])
            }
        } catch {
            throw FetchFailure(error: error)
        }
    }

    /// The server's clock as `location` (http(s)) answers a HEAD request, by its `Date` header,
    /// to the second; `nil` when it sends none it can read, or is not a server (a file has no
    /// clock). One attempt, a playlist's deadline.
    package func serverDate(_ location: String) async throws(FetchFailure) -> Date? {
        guard Location.transport(of: location) == .http else { return nil }
        do throws(FetchError) {
            let deadline = limits.deadline(for: .playlist, targetDuration: nil)
            return try await transport.read(location, method: .HEAD, range: nil, limit: 0, resource: .playlist, deadline: deadline,
                                            afterEachChunk: {}) { _ in }.date
        } catch {
            throw FetchFailure(error: error)
        }
    }

    private func readOnce(_ location: String, range: ByteRange?, as resource: Fetcher.Limits.Resource, targetDuration: Double?,
                          afterEachChunk: () async -> Void, consume: (UnsafeBufferPointer<UInt8>) -> Void) async throws(FetchError) -> String {
        let limit = limits.maximumBytes(for: resource)
        if let range, range.length > limit { throw .tooLarge(resource, limit: limit, declared: Int64(range.length)) }
        let deadline = limits.deadline(for: resource, targetDuration: targetDuration)
        switch Location.transport(of: location) {
        case .http:
            // Playlists and MPDs are text, most of what a meter fetches, and compress tenfold.
            return try await transport.read(location, range: range, limit: limit, resource: resource, deadline: deadline,
                                            compressed: resource == .playlist, afterEachChunk: afterEachChunk, consume: consume).location
        case .file:
            var file = try LocalFile(location, range: range, limit: limit, resource: resource)
            while let chunk = try file.next(interrupt: interrupt) {
                consume(chunk)
                await afterEachChunk()
            }
        case .stream:
            try await readStream(location, range: range, limit: limit, resource: resource, deadline: deadline,
                                 afterEachChunk: afterEachChunk, consume: consume)
        }
        return location
    }

    /// Through libavformat, on `BlockingPool` a read at a time: only a whole input is ever read
    /// this way (a playlist may refer to nothing but http(s) and local files).
    private func readStream(_ location: String, range: ByteRange?, limit: Int, resource: Fetcher.Limits.Resource, deadline: Double?,
                            afterEachChunk: () async -> Void, consume: (UnsafeBufferPointer<UInt8>) -> Void) async throws(FetchError) {
        let (interrupt, ioTimeout) = (self.interrupt, self.ioTimeout.seconds)
        let stream = try await BlockingPool.run { () throws(FetchError) in
            let stream = StreamReading(try ByteStream(url: location, interrupt: interrupt, ioTimeout: ioTimeout, deadline: deadline,
                                                      range: range))
            if range == nil, let declared = stream.size, declared > limit { throw .tooLarge(resource, limit: limit, declared: declared) }
            return stream
        }
        let wanted = range?.length ?? .max
        var total = 0
        while total < wanted {
            let room = min(Self.chunkSize, wanted - total)
            guard let chunk = try await BlockingPool.run({ () throws(FetchError) in try stream.next(upTo: room) }), !chunk.isEmpty else { break }
            total += chunk.count
            if total > limit { throw .tooLarge(resource, limit: limit, declared: nil) }
            chunk.withUnsafeBufferPointer(consume)
            await afterEachChunk()
        }
        if let range, total < range.length { throw .shortRange(range, got: total) }
    }
}
