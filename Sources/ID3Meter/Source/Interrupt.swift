import CID3MeterShim
import Foundation

/// Cancellation of blocking libavformat I/O: libavformat polls it while it waits on the network,
/// so stopping the meter never waits on a stalled server. (Stalls themselves end with the I/O
/// timeout, libavformat's rw_timeout.)
// Unchecked: the shim reads and writes the flag atomically; the pointer never changes.
package final class Interrupt: @unchecked Sendable {
    let pointer: OpaquePointer

    /// A fresh interrupt, not cancelled.
    public init() {
        guard let pointer = idm_interrupt_new() else { fatalError("out of memory allocating an interrupt") }
        self.pointer = pointer
    }

    deinit { idm_interrupt_free(pointer) }

    /// Makes every libavformat call that holds this interrupt return at its next check; it cannot
    /// be undone.
    public func cancel() { idm_interrupt_cancel(pointer) }

    public var isCancelled: Bool { idm_interrupt_is_cancelled(pointer) != 0 }

    /// Sleeps up to `seconds`, returning early (false) when cancelled.
    func sleep(_ seconds: Double) -> Bool {
        var left = seconds
        while left > 0, !isCancelled {
            Thread.sleep(forTimeInterval: min(left, 0.05))
            left -= 0.05
        }
        return !isCancelled
    }
}
