import CID3MeterShim
import Foundation
import Synchronization

/// Cancellation of blocking libavformat I/O: libavformat polls it while it waits on the network,
/// so stopping the meter never waits on a stalled server. (Stalls themselves end with the I/O
/// timeout, libavformat's rw_timeout.)
// Unchecked: the shim reads and writes the flag atomically; the pointer never changes.
package final class Interrupt: @unchecked Sendable {
    let pointer: OpaquePointer
    /// The interrupts of the sessions made from this one's fetcher: cancelled with it.
    private let children = Mutex<[Child]>([])

    private struct Child {
        weak var interrupt: Interrupt?
    }

    /// A fresh interrupt, not cancelled.
    public init() {
        guard let pointer = idm_interrupt_new() else { fatalError("out of memory allocating an interrupt") }
        self.pointer = pointer
    }

    deinit { idm_interrupt_free(pointer) }

    /// Makes every libavformat call that holds this interrupt, or one of its children, return at
    /// its next check; it cannot be undone.
    public func cancel() {
        idm_interrupt_cancel(pointer)
        for child in children.withLock({ $0 }) { child.interrupt?.cancel() }
    }

    /// An interrupt of its own for one input's reading (a player session): cancelling it ends
    /// that reading alone, cancelling this one ends every child's too. A reused scanner's
    /// second input is not read with the first's cancellation.
    func child() -> Interrupt {
        let child = Interrupt()
        children.withLock { children in
            children.removeAll { $0.interrupt == nil }
            children.append(Child(interrupt: child))
        }
        // Cancelled before the child was listed: the child is still cancelled.
        if isCancelled { child.cancel() }
        return child
    }

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
