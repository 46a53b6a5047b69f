import NIOCore
import NIOPosix
import Synchronization

/// Where work that blocks runs (libavformat's reads and opens, the blocks of a big file, name
/// lookups): a pool of its own, so that it never holds a thread of Swift's cooperative pool nor
/// takes a thread per stream or per input. Its threads start at the first job and last until
/// `shutdown()`, which a program that goes on after its streams calls (the command line never
/// does: it exits). A job that could wait long (a silent socket) is cut into short ones by its
/// caller; an open waits at most the stream's I/O timeout.
public enum BlockingPool {
    /// Four at least: this work waits on the network more than it computes, and two opens
    /// waiting out their timeouts must leave threads to the reads of the streams already open.
    /// Not NIO's shared pool, which a web server in the same process reads its files on.
    static let threads = max(System.coreCount, 4)

    /// The running pool; `nil` before the first job and after `shutdown()`.
    private static let pool = Mutex<NIOThreadPool?>(nil)

    /// `work`'s result, run on the pool. Task cancellation does not skip it: the caller's
    /// interrupt is what ends blocking work early.
    package static func run<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: Result { () throws(E) -> T in try work() }) }
        }
        return try result.get()
    }

    /// Runs `job` on the pool, starting one if none runs; a job a shutdown cancelled before it
    /// ran goes to the next pool.
    private static func submit(_ job: @escaping @Sendable () -> Void) {
        let running = pool.withLock { pool in
            if let pool { return pool }
            let started = NIOThreadPool(numberOfThreads: threads)
            started.start()
            pool = started
            return started
        }
        running.submit { state in
            guard case .active = state else { return submit(job) }
            job()
        }
    }

    /// Ends the pool's threads once the jobs running on them are done. Call it when nothing
    /// reads through the library any more (every stream ended, every scan done); a job that
    /// comes later starts a pool again. libavformat, once loaded, stays loaded: unloading a
    /// library whose code other threads may still return into is not safe.
    public static func shutdown() async {
        guard let running = pool.withLock({ $0.take() }) else { return }
        try? await running.shutdownGracefully()
    }
}
