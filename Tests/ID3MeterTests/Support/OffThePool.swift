import Foundation
import ID3Meter

/// Runs blocking work (a scan, a child process) on a thread of its own: Swift Testing runs tests
/// on the cooperative pool, which has as many threads as cores, and a test that blocks one for
/// seconds delays the timers of every live test running beside it.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    let result: Result<T, any Error> = await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: Result { try work() }) }
    }
    return try result.get()
}
