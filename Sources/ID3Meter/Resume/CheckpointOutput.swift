import Foundation
import Synchronization

/// The last output a meter with `--state` writes to: it sees each record after every other
/// output has it, folds its deliveries, and about once a second has the state directory write
/// a checkpoint of them, with how far the records file had grown by then. So a checkpoint is
/// never ahead of the records, and the records past it are read back on start.
package final class CheckpointOutput: MeterOutput, Sendable {
    private struct Folded {
        var points: ResumePoints
        var lastSave: Date = .distantPast
        var changed = false
        /// The records file's size when every record written to it had been folded, and which file it was.
        var records: StateDirectory.FileIdentity?
    }

    private let state: StateDirectory
    private let recordsFile: String?
    private let folded: Mutex<Folded>
    private let interval: TimeInterval

    /// Starts from `recovered` (what the state directory recovered); `recordsFile` is the
    /// `--output` file the records also go to.
    public init(state: StateDirectory, recovered: ResumePoints, recordsFile: String?, interval: TimeInterval = 1) {
        self.state = state
        self.recordsFile = recordsFile.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        folded = Mutex(Folded(points: recovered))
        self.interval = interval
    }

    public func write(_ record: MeterRecord) {
        guard record.delivery != nil else { return }
        let due: Checkpoint? = folded.withLock { folded in
            folded.points.fold(record)
            folded.changed = true
            guard Date().timeIntervalSince(folded.lastSave) >= interval else { return nil }
            // Every output before this one has the record, and no other is being written:
            // the file's size now is where the unfolded records would start.
            folded.records = recordsFile.flatMap(StateDirectory.identity(of:))
            return take(&folded)
        }
        if let due { state.save(due) }
    }

    /// Folds the records of a batch the collector has accepted and writes a checkpoint before
    /// the batch leaves the spool: once it is gone, the checkpoint is the only trace of them.
    /// Not called among the writes: the records file's size now may cover a record not folded
    /// yet, so the offset stays the last one known to be behind every unfolded record.
    public func collectorAccepted(_ lines: Substring) async {
        let checkpoint = folded.withLock { folded in
            _ = folded.points.fold(jsonLines: lines)
            return take(&folded)
        }
        await state.saveNow(checkpoint)
    }

    public func finish() async {
        let checkpoint = folded.withLock { folded in
            guard folded.changed else { return nil as Checkpoint? }
            // Called once writing is over.
            folded.records = recordsFile.flatMap(StateDirectory.identity(of:))
            return take(&folded)
        }
        if let checkpoint { await state.saveNow(checkpoint) }
    }

    private func take(_ folded: inout Folded) -> Checkpoint {
        folded.lastSave = Date()
        folded.changed = false
        return Checkpoint(recordsFile: recordsFile, recordsOffset: folded.records?.size ?? 0, recordsInode: folded.records?.inode,
                          points: folded.points)
    }

    public var health: OutputHealth? { state.health }

    public func takeNotices() -> [MeterRecord] { state.takeNotices() }
}
