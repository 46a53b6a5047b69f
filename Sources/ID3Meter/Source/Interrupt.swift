import CID3MeterShim
import Foundation

/// Cancellation and a deadline for blocking libavformat I/O: libavformat polls it while it
/// waits on the network, so a stalled server cannot hang a read forever.
public final class Interrupt: @unchecked Sendable {
    // The shim reads and writes the flag and deadline atomically; the pointer never changes.
    let pointer: OpaquePointer

    public init() {
        guard let pointer = idm_interrupt_new() else { fatalError("out of memory allocating an interrupt") }
        self.pointer = pointer
    }

    deinit { idm_interrupt_free(pointer) }

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

    /// Makes blocking I/O give up `seconds` from now; `nil` removes the deadline.
    public func setDeadline(after seconds: Double?) {
        idm_interrupt_set_deadline_after(pointer, seconds.map { Int64($0 * 1_000_000) } ?? 0)
    }
}
