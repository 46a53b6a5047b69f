import Dispatch

/// Runs blocking libavformat work (network I/O, demuxing) on a dedicated serial queue, so
/// it never occupies a thread of Swift's cooperative pool. One executor per source keeps a
/// source's calls in order.
package final class BlockingExecutor: Sendable {
    private let queue: DispatchQueue

    package init(label: String) {
        queue = DispatchQueue(label: "id3-meter.\(label)")
    }

    package func run<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(E) -> T in try work() }) }
        }
        return try result.get()
    }
}
