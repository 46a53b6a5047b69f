/// Reads resources (playlists, segments, keys, initialisation sections, whole inputs) through
/// libavformat's own I/O, so every protocol it speaks works the same for all of them, within
/// `FetchLimits`: each fetch has a byte limit and an overall deadline besides the idle timeout.
public struct Fetcher: Sendable {
    /// How often a failed network fetch is tried again, and how long to wait between tries.
    public struct RetryPolicy: Sendable {
        public var attempts: Int
        public var firstDelay: Double
        public var maximumDelay: Double

        public init(attempts: Int = 4, firstDelay: Double = 0.5, maximumDelay: Double = 4) {
            self.attempts = attempts
            self.firstDelay = firstDelay
            self.maximumDelay = maximumDelay
        }

        public static let none = RetryPolicy(attempts: 1)
    }

    public var ioTimeout: Double
    public var interrupt: Interrupt
    public var retry: RetryPolicy
    public var limits: FetchLimits

    public init(ioTimeout: Double = 10, interrupt: Interrupt = Interrupt(), retry: RetryPolicy = RetryPolicy(),
                limits: FetchLimits = FetchLimits()) {
        self.ioTimeout = ioTimeout
        self.interrupt = interrupt
        self.retry = retry
        self.limits = limits
    }

    /// Hands `location`'s bytes to `consume` as they arrive. A network resource that fails (a 404
    /// at a live edge, a 503, a stalled or refused connection) is read again from the start after
    /// a backoff, `restart` being called first so that the consumer drops what it had; with
    /// `retrying` off, and for local files, there is one attempt.
    public func read(_ location: String, range: ByteRange? = nil, as resource: FetchLimits.Resource, targetDuration: Double? = nil,
                     retrying: Bool = true, restart: () -> Void = {},
                     consume: (UnsafeBufferPointer<UInt8>) -> Void) throws(FetchFailure) {
        let network = Location.hasScheme(location) && !location.lowercased().hasPrefix("file:")
        let attempts = retrying && network ? max(retry.attempts, 1) : 1
        var delay = retry.firstDelay
        for attempt in 1...attempts {
            if attempt > 1 { restart() }
            do {
                return try readOnce(location, range: range, as: resource, targetDuration: targetDuration, consume: consume)
            } catch {
                if !error.isWorthRetrying || attempt == attempts || !interrupt.sleep(delay) {
                    throw FetchFailure(error: error, attempts: attempt)
                }
                delay = min(delay * 2, retry.maximumDelay)
            }
        }
    }

    /// The whole resource: for what is parsed whole (playlists, keys, initialisation sections).
    public func fetch(_ location: String, range: ByteRange? = nil, as resource: FetchLimits.Resource, targetDuration: Double? = nil,
                      retrying: Bool = true) throws(FetchFailure) -> [UInt8] {
        var bytes: [UInt8] = []
        try read(location, range: range, as: resource, targetDuration: targetDuration, retrying: retrying,
                 restart: { bytes.removeAll() }) { bytes.append(contentsOf: $0) }
        return bytes
    }

    private static let chunkSize = 256 << 10

    private func readOnce(_ location: String, range: ByteRange?, as resource: FetchLimits.Resource, targetDuration: Double?,
                          consume: (UnsafeBufferPointer<UInt8>) -> Void) throws(FetchError) {
        let limit = limits.maximumBytes(for: resource)
        if let range, range.length > limit { throw .tooLarge(resource, limit: limit, declared: Int64(range.length)) }
        let stream = try ByteStream(url: location, interrupt: interrupt, ioTimeout: ioTimeout,
                                    deadline: limits.deadline(for: resource, targetDuration: targetDuration), range: range)
        // A declared size is a claim, used only to refuse early, never to allocate (a sub-range's is the playlist's).
        if range == nil, let declared = stream.size, declared > limit { throw .tooLarge(resource, limit: limit, declared: declared) }
        let wanted = range?.length ?? .max
        var buffer = [UInt8](repeating: 0, count: Self.chunkSize)
        var total = 0
        while total < wanted {
            let room = min(buffer.count, wanted - total)
            let got = try buffer.withUnsafeMutableBufferPointer { bytes throws(FetchError) in
                try stream.read(into: UnsafeMutableBufferPointer(rebasing: bytes[..<room]))
            }
            if got == 0 { break }
            total += got
            if total > limit { throw .tooLarge(resource, limit: limit, declared: nil) }
            buffer.withUnsafeBufferPointer { consume(UnsafeBufferPointer(rebasing: $0[..<got])) }
        }
        if let range, total < range.length { throw .shortRange(range, got: total) }
    }
}
