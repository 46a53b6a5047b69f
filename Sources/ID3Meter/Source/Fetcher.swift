import CID3MeterShim

/// Reads whole resources (playlists, segments, keys) through libavformat's own I/O, so
/// every protocol it speaks (file, http, https) works the same for playlists and media.
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

    public init(ioTimeout: Double = 10, interrupt: Interrupt = Interrupt(), retry: RetryPolicy = RetryPolicy()) {
        self.ioTimeout = ioTimeout
        self.interrupt = interrupt
        self.retry = retry
    }

    /// Fetches, trying a network resource again after a failure (a 404 at a live edge, a 503, a
    /// stalled or refused connection) with exponential backoff. A local file is tried once.
    public func fetchRetrying(_ location: String) throws(FetchFailure) -> [UInt8] {
        let attempts = Location.hasScheme(location) && !location.hasPrefix("file:") ? max(retry.attempts, 1) : 1
        var delay = retry.firstDelay
        for attempt in 1...attempts {
            do {
                return try fetch(location)
            } catch {
                if error.isCancelled || attempt == attempts || !interrupt.sleep(delay) {
                    throw FetchFailure(error: error, attempts: attempt)
                }
                delay = min(delay * 2, retry.maximumDelay)
            }
        }
        throw FetchFailure(error: AVError(code: idm_error_exit()), attempts: attempts)
    }

    public func fetch(_ location: String) throws(AVError) -> [UInt8] {
        try ByteStream(url: location, interrupt: interrupt, ioTimeout: ioTimeout).readAll()
    }
}

/// A fetch that failed for good: libav's error, after how many tries.
public struct FetchFailure: Error, Sendable, CustomStringConvertible {
    public var error: AVError
    public var attempts: Int

    public var description: String { attempts > 1 ? "\(error) (after \(attempts) attempts)" : "\(error)" }
}
