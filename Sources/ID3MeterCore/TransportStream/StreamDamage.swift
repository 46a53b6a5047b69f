extension InputFailure {
    /// What was wrong with an MPEG-TS input's bytes, where (byte offsets in the input), and whether
    /// anything was lost to it. Reported as a failure when bytes were lost, as a warning when the
    /// input only ended early and was read as far as it goes.
    public enum StreamDamage: Error, Sendable, Equatable, CustomStringConvertible {
        /// The continuity counter of a timed-ID3 PID skipped: packets lost, and with them the PES
        /// in progress, if there was one.
        case continuity(pid: Int, at: Int64, droppedPES: Bool)
        /// A timed-ID3 PES that could not be read.
        case unreadablePES(pid: Int, at: Int64, reason: String)
        /// Bytes between TS packets, skipped until two sync bytes a packet apart.
        case lostSync(at: Int64, skipped: Int)
        /// The input ended inside a timed-ID3 PES.
        case endsInsidePES(pid: Int, at: Int64, bytes: Int, declared: Int)
        /// The input ended inside a TS packet (a recording cut short).
        case endsInsidePacket(at: Int64, bytes: Int)
        /// A PES dropped: with it, the PES and tags in progress on every timed-ID3 PID held more
        /// than `limit` bytes (a stream leaving thousands of PIDs mid-PES).
        case heldTooMuch(pid: Int, at: Int64, bytes: Int, limit: Int)

        /// Bytes were lost (a failure), not only cut short at the end (a warning).
        public var lostBytes: Bool {
            switch self {
            case .continuity, .unreadablePES, .lostSync, .heldTooMuch: true
            case .endsInsidePES, .endsInsidePacket: false
            }
        }

        public var description: String {
            switch self {
            case .continuity(let pid, let position, let droppedPES):
                "continuity error on PID \(TagJoiner.hex(pid)) at byte \(position): packets lost"
                    + (droppedPES ? "; the PES they belonged to was dropped" : "")
            case .unreadablePES(let pid, let position, let reason):
                "PID \(TagJoiner.hex(pid)) at byte \(position): \(reason)"
            case .lostSync(let position, let skipped):
                "lost MPEG-TS sync at byte \(position): \(skipped) bytes skipped"
            case .endsInsidePES(let pid, let position, let bytes, let declared):
                "ends inside the timed-ID3 PES on PID \(TagJoiner.hex(pid)) at byte \(position): \(bytes) of \(declared) bytes, read as they are"
            case .endsInsidePacket(let position, let bytes):
                "ends inside a TS packet: the last \(bytes) bytes, from byte \(position), are a packet cut short"
            case .heldTooMuch(let pid, let position, let bytes, let limit):
                "PID \(TagJoiner.hex(pid)) at byte \(position): PES of \(bytes) bytes dropped: the PES and tags in progress on all "
                    + "timed-ID3 PIDs passed \(limit >> 20) MB"
            }
        }
    }
}
