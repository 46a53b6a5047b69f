import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A meter's `--state` folder: its checkpoint, and a lock so that two meters never share it.
///
/// A checkpoint says where each channel's last delivery was when it was written; the records
/// written after it (in the `--output` file past its offset, and in the collector's spool) are
/// read back on start, so what a restarted meter resumes from is exactly what it recorded,
/// however it was stopped. A checkpoint that cannot be read, or was written by another format
/// version, is moved aside and reported, and the meter starts without one.
package final class StateDirectory: Sendable {
    public let directory: URL
    private let lockDescriptor: Int32
    private let queue = DispatchQueue(label: "id3-meter.state")
    /// Checkpoints the disk refused, and whether it refuses now.
    private let saving: Mutex<(health: OutputHealth, changes: [LineWriter.Change])>
    private var checkpointURL: URL { directory.appendingPathComponent("checkpoint.json") }

    /// What a start found: the last delivery of each channel, and what was wrong on the way.
    public struct Recovery: Sendable {
        public var points: ResumePoints
        public var notes: [String]
    }

    /// Opens (creating) the folder and takes its lock; throws `StateError` when another meter
    /// holds it or it cannot be written.
    public init(directory: URL) throws(StateError) {
        self.directory = directory
        saving = Mutex((OutputHealth(output: "state folder \(directory.path)"), []))
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StateError(directory: directory.path, reason: .cannotCreate(error.localizedDescription))
        }
        let lockPath = directory.appendingPathComponent("lock").path
        lockDescriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lockDescriptor >= 0 else {
            throw StateError(directory: directory.path, reason: .cannotOpenLock(lockPath, errno: errno))
        }
        guard flock(lockDescriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(lockDescriptor)
            throw StateError(directory: directory.path, reason: .inUse)
        }
    }

    deinit { close(lockDescriptor) }

    /// The last delivery of each channel: the checkpoint, then the records written after it in
    /// `recordsFile` and in `spool` (its open file and sealed batches).
    public func recover(recordsFile: String?, spool: URL?) -> Recovery {
        var notes: [String] = []
        var checkpoint = Checkpoint()
        if let data = FileManager.default.contents(atPath: checkpointURL.path) {
            do { checkpoint = try Self.decode(data) } catch { notes.append(setAside(because: error.reason)) }
        }
        var points = checkpoint.points
        if let recordsFile {
            let absolute = URL(fileURLWithPath: recordsFile).standardizedFileURL.path
            if checkpoint.recordsFile == nil || checkpoint.recordsFile == absolute {
                for (file, offset) in Self.recordsAfter(checkpoint, in: absolute, notes: &notes) {
                    let unreadable = points.fold(jsonLines: Self.text(of: file, from: offset)[...])
                    if unreadable > 0 { notes.append("\(file): \(unreadable) line(s) after the checkpoint are not records; skipped") }
                }
            } else {
                notes.append("the checkpoint was written with --output \(checkpoint.recordsFile!), not \(recordsFile): records written "
                             + "to that file after it are not read")
            }
        }
        if let spool, let files = try? FileManager.default.contentsOfDirectory(at: spool, includingPropertiesForKeys: nil) {
            // Batches in the order they were sealed, then the open file, which was written after them.
            let batches = files.filter { $0.lastPathComponent.hasPrefix("batch-") }.sorted { $0.lastPathComponent < $1.lastPathComponent }
            for file in batches + files.filter({ $0.lastPathComponent == "open.jsonl" }) {
                let unreadable = points.fold(jsonLines: Self.text(of: file.path, from: 0)[...])
                if unreadable > 0 { notes.append("\(file.path): \(unreadable) line(s) are not records; skipped") }
            }
        }
        return Recovery(points: points, notes: notes)
    }

    /// The files, and where in each, that hold the records written after `checkpoint`: its
    /// records file past its offset, or, when that file has been rotated since, the rotated file
    /// past the offset, every file rotated after it, and the current file.
    private static func recordsAfter(_ checkpoint: Checkpoint, in path: String, notes: inout [String]) -> [(String, UInt64)] {
        let current = identity(of: path)
        guard let inode = checkpoint.recordsInode, let current, current.inode != inode else {
            if let current, current.size < checkpoint.recordsOffset {
                notes.append("\(path) is shorter than the checkpoint says (truncated?): read from its start")
                return [(path, 0)]
            }
            return [(path, checkpoint.recordsOffset)]
        }
        let rotated = RecordFile.rotatedFiles(of: path)
        guard let index = rotated.firstIndex(where: { identity(of: $0)?.inode == inode }) else {
            notes.append("the file the checkpoint points into is no longer beside \(path) (rotated away?): read \(path) from its start")
            return [(path, 0)]
        }
        return [(rotated[index], checkpoint.recordsOffset)] + rotated[(index + 1)...].map { ($0, 0) } + [(path, 0)]
    }

    /// Moves the checkpoint aside as `checkpoint.json.set-aside-<time>` and says so.
    private func setAside(because reason: String) -> String {
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        let aside = directory.appendingPathComponent("checkpoint.json.set-aside-\(stamp)")
        do {
            try FileManager.default.moveItem(at: checkpointURL, to: aside)
            return "\(checkpointURL.path): \(reason); set aside as \(aside.lastPathComponent), starting without a checkpoint"
        } catch {
            return "\(checkpointURL.path): \(reason), and it could not be set aside (\(error.localizedDescription)); "
                + "starting without a checkpoint"
        }
    }

    /// Writes `checkpoint` in the background, in the order asked: the records file is synced
    /// first, then the checkpoint is written beside and renamed over the old one, so that a
    /// crash of the machine leaves the old checkpoint or the new, never one ahead of the records.
    func save(_ checkpoint: Checkpoint) {
        queue.async { [self] in write(checkpoint) }
    }

    /// As `save`, returning once this checkpoint, and every one asked before it, is written.
    func saveNow(_ checkpoint: Checkpoint) async {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                write(checkpoint)
                continuation.resume()
            }
        }
    }

    private func write(_ checkpoint: Checkpoint) {
        if let records = checkpoint.recordsFile { Self.sync(records) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(checkpoint) else { return }
        let temporary = directory.appendingPathComponent("checkpoint.json.new")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        var error = descriptor < 0 ? errno : LineWriter.appendWhole([UInt8](data), to: descriptor)
        if descriptor >= 0 {
            if error == nil, fsync(descriptor) != 0 { error = errno }
            close(descriptor)
        }
        if error == nil, rename(temporary.path, checkpointURL.path) != 0 { error = errno }
        saved(failure: error.map { String(cString: strerror($0)) })
    }

    /// A checkpoint the disk refused leaves the last one in place (a restart resumes from an
    /// older point, the duplicate filter keeping it exactly-once): counted and alerted.
    private func saved(failure: String?) {
        saving.withLock { saving in
            if let failure {
                saving.health.writeErrors += 1
                if saving.health.failure != failure { saving.changes.append(.failing(failure)) }
            } else if saving.health.failure != nil {
                saving.changes.append(.recovered(0))
            }
            saving.health.failure = failure
        }
    }

    var health: OutputHealth { saving.withLock { $0.health } }

    func takeNotices() -> [MeterRecord] {
        saving.withLock { saving in
            defer { saving.changes = [] }
            return LineWriter.Change.records(saving.changes, loss: RecordLoss(), health: saving.health,
                                             meanwhile: "the last checkpoint written stays, and a restart resumes from it", at: Date())
        }
    }

    struct Unreadable: Error { var reason: String }

    static func decode(_ data: Data) throws(Unreadable) -> Checkpoint {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Unreadable(reason: "not a JSON object (damaged or cut short)")
        }
        guard object["format"] as? String == Checkpoint.format, object["version"] as? Int == Checkpoint.version else {
            let version = (object["meter_version"] as? String).map { " (id3-meter \($0))" } ?? ""
            throw Unreadable(reason: "written in another format\(version), not \(Checkpoint.format) \(Checkpoint.version)")
        }
        do {
            return try JSONDecoder().decode(Checkpoint.self, from: data)
        } catch {
            throw Unreadable(reason: "not a checkpoint: \(error)")
        }
    }

    static func size(of path: String) -> UInt64? { identity(of: path)?.size }

    /// A file's size and inode: which file a path named, and how long it was, at one moment.
    struct FileIdentity: Sendable, Equatable {
        var size: UInt64
        var inode: UInt64
    }

    static func identity(of path: String) -> FileIdentity? {
        var info = stat()
        return stat(path, &info) == 0 ? FileIdentity(size: UInt64(info.st_size), inode: UInt64(info.st_ino)) : nil
    }

    private static func text(of path: String, from offset: UInt64) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { return "" }
        defer { try? handle.close() }
        try? handle.seek(toOffset: offset)
        return String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
    }

    private static func sync(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}

/// A state folder that cannot be used.
package struct StateError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        case cannotCreate(String)
        case cannotOpenLock(String, errno: Int32)
        /// Another meter holds its lock.
        case inUse

        public var description: String {
            switch self {
            case .cannotCreate(let why): "cannot create it: \(why)"
            case .cannotOpenLock(let path, let code): "cannot open \(path): \(String(cString: strerror(code)))"
            case .inUse: "another id3-meter is using it"
            }
        }
    }

    public var directory: String
    public var reason: Reason
    public var description: String { "state folder \(directory): \(reason)" }
}
