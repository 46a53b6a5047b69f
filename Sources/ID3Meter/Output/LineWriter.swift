import DequeModule
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Whole lines appended to a descriptor, never a torn one, and never a trap (Foundation's legacy
/// data-writing call on a file handle traps on ENOSPC). A line the storage refuses part way is cut back to
/// where it began, and held, with every line after it, in order, until the storage takes them
/// again (ENOSPC, EDQUOT, EIO, a read-only remount, a full pipe). What is held is bounded: past
/// `holdLimit` bytes the oldest held lines are dropped and counted, so a loss is said, not silent.
/// Not thread-safe: its owner serialises the calls.
package final class LineWriter {
    struct Line {
        var bytes: [UInt8]
        var sentAt: Double
        var channel: String?
    }

    /// What a call changed, for the owner to say in records and logs.
    enum Change: Equatable {
        case failing(String)
        /// Written again; how many held lines went out.
        case recovered(Int)
    }

    /// Appends `bytes` whole to `descriptor`, or leaves it as it was (a regular file is cut
    /// back to its size before the call); the errno of the refusal otherwise.
    package static func appendWhole(_ bytes: [UInt8], to descriptor: Int32) -> Int32? {
        let start = lseek(descriptor, 0, SEEK_END)
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + done, bytes.count - done) }
            if written > 0 {
                done += written
                continue
            }
            let error = written == 0 ? ENOSPC : errno
            if error == EINTR { continue }
            if done > 0, start >= 0 { _ = ftruncate(descriptor, start) }
            return error
        }
        return nil
    }

    private(set) var descriptor: Int32
    let holdLimit: Int
    /// A line written before this descriptor was taken over ends without a newline: the first
    /// line written starts with one, so that the two are never read as one.
    var endsMidLine = false
    private(set) var health: OutputHealth
    private var held: Deque<Line> = []
    private var heldBytes = 0
    private(set) var loss = RecordLoss()
    private var changes: [Change] = []

    init(descriptor: Int32, name: String, holdLimit: Int = 16 << 20) {
        self.descriptor = descriptor
        self.holdLimit = holdLimit
        health = OutputHealth(output: name)
    }

    var isHolding: Bool { !held.isEmpty }

    /// Writes `line` (without its newline) after whatever is held, or holds it.
    func append(_ line: [UInt8], sentAt: Double, channel: String?) {
        var bytes = line
        bytes.append(UInt8(ascii: "\n"))
        held.append(Line(bytes: bytes, sentAt: sentAt, channel: channel))
        heldBytes += bytes.count
        drain(withNewLine: true)
        while heldBytes > holdLimit, held.count > 1 {
            let dropped = held.removeFirst()
            heldBytes -= dropped.bytes.count
            loss.add(sentAt: dropped.sentAt, channel: dropped.channel)
            health.recordsLost += 1
        }
        health.recordsHeld = held.count
    }

    /// Tries to write what is held.
    func retry() {
        guard !held.isEmpty else { return }
        drain(withNewLine: false)
        health.recordsHeld = held.count
    }

    /// Writes to `descriptor` from now on (a rotated file); what is held goes there.
    func replaceDescriptor(_ descriptor: Int32) {
        self.descriptor = descriptor
        endsMidLine = false
    }

    /// What changed since the last call, and the records dropped since then.
    func take() -> (changes: [Change], loss: RecordLoss) {
        defer {
            changes = []
            loss = RecordLoss()
        }
        return (changes, loss)
    }

    /// Gives up what is still held (the process is ending): counted as lost.
    func abandonHeld() {
        for line in held { loss.add(sentAt: line.sentAt, channel: line.channel) }
        health.recordsLost += held.count
        held = []
        heldBytes = 0
        health.recordsHeld = 0
    }

    /// Writes held lines until the storage refuses one; `withNewLine` when the last of them was
    /// just appended (it was never held).
    private func drain(withNewLine: Bool) {
        var written = 0
        while let first = held.first {
            let bytes = endsMidLine ? [UInt8(ascii: "\n")] + first.bytes : first.bytes
            if let error = Self.appendWhole(bytes, to: descriptor) {
                health.writeErrors += 1
                let reason = String(cString: strerror(error))
                if health.failure != reason {
                    health.failure = reason
                    changes.append(.failing(reason))
                }
                break
            }
            endsMidLine = false
            held.removeFirst()
            heldBytes -= first.bytes.count
            written += 1
        }
        if held.isEmpty, health.failure != nil {
            health.failure = nil
            changes.append(.recovered(written - (withNewLine ? 1 : 0)))
        }
    }
}

extension LineWriter.Change {
    /// The records an output's changes and losses are said in: an `output_write_failing` alert
    /// starting or ending, and a `loss` record per channel.
    static func records(_ changes: [Self], loss: RecordLoss, health: OutputHealth,
                        meanwhile: String = "records are held in memory until it can", at date: Date) -> [MeterRecord] {
        var records: [MeterRecord] = changes.map { change in
            switch change {
            case .failing(let reason): .outputAlert(health.output, failure: reason, held: health.recordsHeld, meanwhile: meanwhile, at: date)
            case .recovered(let held): .outputAlert(health.output, failure: nil, held: held, meanwhile: meanwhile, at: date)
            }
        }
        if !loss.isEmpty {
            let why = health.failure.map { "could not be stored (\($0))" } ?? "were still held when the meter ended"
            records += loss.records(output: health.output, why: why, at: date)
        }
        return records
    }
}
