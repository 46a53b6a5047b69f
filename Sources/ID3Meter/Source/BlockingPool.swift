import NIOCore
import NIOPosix

/// Where work that blocks runs (libavformat's reads and opens, the blocks of a big file, name
/// lookups): a pool of its own, so that it never holds a thread of Swift's cooperative pool nor
/// takes a thread per stream or per input. Its threads start at the first job and last as long
/// as the process. A job that could wait long (a silent socket) is cut into short ones by its
/// caller; an open waits at most the stream's I/O timeout.
package enum BlockingPool {
    /// Four at least: this work waits on the network more than it computes, and two opens
    /// waiting out their timeouts must leave threads to the reads of the streams already open.
    /// Not NIO's shared pool, which a web server in the same process reads its files on.
    static let threads = max(System.coreCount, 4)

    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        return pool
    }()

    /// `work`'s result, run on the pool. Task cancellation does not skip it: the caller's
    /// interrupt is what ends blocking work early.
    package static func run<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            pool.submit { _ in
                continuation.resume(returning: Result { () throws(E) -> T in try work() })
            }
        }
        return try result.get()
    }
}
