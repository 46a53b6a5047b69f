import CID3MeterShim

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

    /// Makes blocking I/O give up `seconds` from now; `nil` removes the deadline.
    public func setDeadline(after seconds: Double?) {
        idm_interrupt_set_deadline_after(pointer, seconds.map { Int64($0 * 1_000_000) } ?? 0)
    }
}
