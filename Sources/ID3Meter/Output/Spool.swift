import DequeModule
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Records on their way to the collector, in the order they were made. Each record is appended
/// to `open.jsonl` the moment it is written (a killed process loses nothing the kernel has);
/// `seal()` makes the open file a numbered batch, and a batch leaves only once delivered or
/// dead-lettered. A record the disk refuses, or one past `maximumBytes` of spool, is held in
/// memory, in order, and sent from there (a batch of its own) when the disk has not taken it
/// by the next seal. Held records past `holdLimit` bytes are dropped, oldest first, and counted.
/// A spool found with an open file (a previous run was killed) seals it first.
final class Spool {
    /// A batch waiting to be sent: a file, or records the disk would not take.
    enum Batch: Sendable {
        case file(URL)
        case memory(id: String, lines: [LineWriter.Line])

        /// What its id is made from: the file's name without `.jsonl`, or the memory batch's id.
        var name: String {
            switch self {
            case .file(let url): url.deletingPathExtension().lastPathComponent
            case .memory(let id, _): id
            }
        }
    }

    let directory: URL
    /// Stays with the spool across runs, so a batch resent after a crash keeps its id and a
    /// collector can drop the copy.
    let identifier: String
    let maximumBytes: UInt64?
    let holdLimit: Int
    private var openDescriptor: Int32 = -1
    private var openCount = 0
    private var sequence: Int
    private var diskBytes: UInt64 = 0
    private(set) var queue: Deque<Batch> = []
    /// Records the disk refused, not in a batch yet.
    private var held: Deque<LineWriter.Line> = []
    /// Bytes held in memory: `held` and the memory batches.
    private var memoryBytes = 0
    private var memoryBatches = 0
    private let processToken = String(UUID().uuidString.prefix(8)).lowercased()
    private(set) var health = OutputHealth(output: "collector")
    private var loss = RecordLoss()
    private var changes: [LineWriter.Change] = []
    /// Rejected batch files that could not be moved to `dead-letter/`: not sent again this run.
    private var notKeptThisRun: Set<String> = []
    /// What opening had to say.
    private(set) var notes: [String] = []

    private var openURL: URL { directory.appendingPathComponent("open.jsonl") }
    /// The last batch number used: kept apart from the batches, which leave once delivered, so
    /// that a later run never reuses a number and a collector dropping repeated ids drops only
    /// real repeats.
    private var sequenceURL: URL { directory.appendingPathComponent("last-batch") }
    private var deadLetterFolder: URL { SpoolFolder(directory: directory).deadLetterFolder }

    init(directory: URL, maximumBytes: UInt64? = nil, holdLimit: Int = 16 << 20) throws(CollectorOutput.SpoolError) {
        self.directory = directory
        self.maximumBytes = maximumBytes
        self.holdLimit = holdLimit
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CollectorOutput.SpoolError(directory: directory.path, reason: error.localizedDescription)
        }
        let identifierFile = directory.appendingPathComponent("spool-id")
        if let existing = try? String(contentsOf: identifierFile, encoding: .utf8), !existing.isEmpty {
            identifier = existing
        } else {
            identifier = UUID().uuidString
            do { try identifier.write(to: identifierFile, atomically: true, encoding: .utf8) } catch {
                notes.append("cannot save the spool's id in \(identifierFile.path) (\(error.localizedDescription)): a later run will "
                             + "send this run's unsent batches under another id")
            }
        }
        let files = SpoolFolder(directory: directory).pendingFiles
        let numbered = files.compactMap { Int($0.deletingPathExtension().lastPathComponent.dropFirst(6)) }
        let recorded = (try? String(contentsOf: directory.appendingPathComponent("last-batch"), encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        sequence = max(numbered.max() ?? 0, recorded ?? 0)
        queue = Deque(files.map(Batch.file))
        diskBytes = files.reduce(0) { $0 + (StateDirectory.size(of: $1.path) ?? 0) }
        if let size = StateDirectory.size(of: openURL.path) {
            openCount = size > 0 ? 1 : 0
            diskBytes += size
            sealOpenFile()
            if openCount == 0 { unlink(openURL.path) }
        }
    }

    deinit { if openDescriptor >= 0 { close(openDescriptor) } }

    /// Appends one JSON line (without its newline): on disk, or held.
    func append(_ line: [UInt8], sentAt: Double, channel: String?) {
        let entry = LineWriter.Line(bytes: line + [UInt8(ascii: "\n")], sentAt: sentAt, channel: channel)
        if held.isEmpty {
            guard let refusal = writeToDisk(entry.bytes) else {
                if health.failure != nil { recovered(0) }
                return
            }
            failing(refusal)
        }
        held.append(entry)
        memoryBytes += entry.bytes.count
        dropPastLimit()
        health.recordsHeld = heldRecords
    }

    /// Makes the open file a batch; writes what is held to disk if it can, else makes it a batch
    /// in memory. Batch files put in the folder by another process (`id3-meter spool retry`)
    /// join the queue.
    func seal() {
        sealOpenFile()
        if !held.isEmpty {
            var written = 0
            while let first = held.first {
                if let refusal = writeToDisk(first.bytes) {
                    failing(refusal)
                    break
                }
                held.removeFirst()
                memoryBytes -= first.bytes.count
                written += 1
            }
            sealOpenFile()
            if held.isEmpty {
                recovered(written)
            } else {
                memoryBatches += 1
                queue.append(.memory(id: "memory-\(processToken)-\(memoryBatches)", lines: Array(held)))
                held = []
            }
        }
        let known = Set(queue.map(\.name)).union(notKeptThisRun)
        for file in SpoolFolder(directory: directory).pendingFiles where !known.contains(file.deletingPathExtension().lastPathComponent) {
            queue.append(.file(file))
            diskBytes += StateDirectory.size(of: file.path) ?? 0
        }
        health.recordsHeld = heldRecords
    }

    /// The batch to send next.
    var next: Batch? { queue.first }

    /// A batch's JSON lines; `nil` when its file cannot be read now.
    func text(of batch: Batch) -> String? {
        switch batch {
        case .file(let url): FileManager.default.contents(atPath: url.path).map { String(decoding: $0, as: UTF8.self) }
        case .memory(_, let lines): String(decoding: lines.flatMap(\.bytes), as: UTF8.self)
        }
    }

    /// The batch has left: delivered, or dead-lettered.
    func remove(_ batch: Batch) {
        guard let index = queue.firstIndex(where: { $0.name == batch.name }) else { return }
        queue.remove(at: index)
        switch batch {
        case .file(let url):
            diskBytes -= min(diskBytes, StateDirectory.size(of: url.path) ?? 0)
            unlink(url.path)
        case .memory(_, let lines):
            memoryBytes -= lines.reduce(0) { $0 + $1.bytes.count }
        }
        health.recordsHeld = heldRecords
    }

    /// Replaces `batch` with its two halves, in place, named `NAME.1` and `NAME.2` so that a
    /// restart splits alike and a collector sees the same ids; `false` for a single record.
    func split(_ batch: Batch) -> Bool {
        guard let index = queue.firstIndex(where: { $0.name == batch.name }), let text = text(of: batch) else { return false }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard lines.count > 1 else { return false }
        let halves = [lines[..<(lines.count / 2)], lines[(lines.count / 2)...]]
        var parts: [Batch] = []
        switch batch {
        case .file(let url):
            for (number, half) in halves.enumerated() {
                let part = directory.appendingPathComponent("\(batch.name).\(number + 1).jsonl")
                guard FileManager.default.createFile(atPath: part.path, contents: Data(half.joined(separator: "\n").appending("\n").utf8)) else {
                    parts.forEach { if case .file(let made) = $0 { unlink(made.path) } }
                    return false
                }
                parts.append(.file(part))
            }
            unlink(url.path)
        case .memory(let id, let held):
            let middle = held.count / 2
            parts = [.memory(id: "\(id).1", lines: Array(held[..<middle])), .memory(id: "\(id).2", lines: Array(held[middle...]))]
        }
        queue.replaceSubrange(index...index, with: parts)
        return true
    }

    /// Moves `batch` to `dead-letter/` beside a note of why; records that cannot be kept there
    /// either are counted as lost (from memory) or left in the folder unsent until the next run.
    func deadLetter(_ batch: Batch, why: String) {
        guard let index = queue.firstIndex(where: { $0.name == batch.name }) else { return }
        queue.remove(at: index)
        let text = text(of: batch) ?? ""
        let count = text.split(separator: "\n").count
        let target = deadLetterFolder.appendingPathComponent("\(batch.name).jsonl")
        let note = deadLetterFolder.appendingPathComponent("\(batch.name).reason")
        let stored = (try? FileManager.default.createDirectory(at: deadLetterFolder, withIntermediateDirectories: true)) != nil
            && FileManager.default.createFile(atPath: note.path, contents: Data((why + "\n").utf8))
        switch batch {
        case .file(let url):
            let size = StateDirectory.size(of: url.path) ?? 0
            if stored, rename(url.path, target.path) == 0 {
                diskBytes -= min(diskBytes, size)
            } else {
                notKeptThisRun.insert(batch.name)
            }
            health.recordsDeadLettered += count
        case .memory(_, let lines):
            memoryBytes -= lines.reduce(0) { $0 + $1.bytes.count }
            if stored, FileManager.default.createFile(atPath: target.path, contents: Data(text.utf8)) {
                health.recordsDeadLettered += count
            } else {
                lines.forEach { loss.add(sentAt: $0.sentAt, channel: $0.channel) }
                health.recordsLost += lines.count
            }
        }
        health.recordsHeld = heldRecords
    }

    /// Gives up what only memory holds (the process is ending): counted as lost.
    func abandonHeld() {
        for case .memory(_, let lines) in queue {
            lines.forEach { loss.add(sentAt: $0.sentAt, channel: $0.channel) }
            health.recordsLost += lines.count
        }
        held.forEach { loss.add(sentAt: $0.sentAt, channel: $0.channel) }
        health.recordsLost += held.count
        queue.removeAll { if case .memory = $0 { true } else { false } }
        held = []
        memoryBytes = 0
        health.recordsHeld = 0
    }

    /// What changed since the last call, and the records dropped since then.
    func take() -> (changes: [LineWriter.Change], loss: RecordLoss) {
        defer {
            changes = []
            loss = RecordLoss()
        }
        return (changes, loss)
    }

    private var heldRecords: Int {
        held.count + queue.reduce(0) { count, batch in if case .memory(_, let lines) = batch { count + lines.count } else { count } }
    }

    /// Appends `line` to the open file; why not, when it cannot.
    private func writeToDisk(_ line: [UInt8]) -> String? {
        if let maximumBytes, diskBytes + UInt64(line.count) > maximumBytes {
            return "the spool has reached --spool-max-size (\(maximumBytes) bytes)"
        }
        if openDescriptor < 0 {
            openDescriptor = open(openURL.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            guard openDescriptor >= 0 else { return String(cString: strerror(errno)) }
        }
        if let error = LineWriter.appendWhole(line, to: openDescriptor) { return String(cString: strerror(error)) }
        openCount += 1
        diskBytes += UInt64(line.count)
        return nil
    }

    private func sealOpenFile() {
        guard openCount > 0 else { return }
        if openDescriptor >= 0 {
            _ = fsync(openDescriptor)
            close(openDescriptor)
            openDescriptor = -1
        }
        openCount = 0
        sequence += 1
        try? String(sequence).write(to: sequenceURL, atomically: true, encoding: .utf8)
        let batch = directory.appendingPathComponent(String(format: "batch-%012d.jsonl", sequence))
        if rename(openURL.path, batch.path) == 0 { queue.append(.file(batch)) }
    }

    private func failing(_ reason: String) {
        health.writeErrors += 1
        guard health.failure != reason else { return }
        health.failure = reason
        changes.append(.failing(reason))
    }

    private func recovered(_ written: Int) {
        guard health.failure != nil else { return }
        health.failure = nil
        changes.append(.recovered(written))
    }

    private func dropPastLimit() {
        while memoryBytes > holdLimit {
            if let index = queue.firstIndex(where: { if case .memory = $0 { true } else { false } }),
               case .memory(let id, var lines) = queue[index] {
                let dropped = lines.removeFirst()
                memoryBytes -= dropped.bytes.count
                loss.add(sentAt: dropped.sentAt, channel: dropped.channel)
                if lines.isEmpty { queue.remove(at: index) } else { queue[index] = .memory(id: id, lines: lines) }
            } else if held.count > 1 {
                let dropped = held.removeFirst()
                memoryBytes -= dropped.bytes.count
                loss.add(sentAt: dropped.sentAt, channel: dropped.channel)
            } else {
                break
            }
            health.recordsLost += 1
        }
    }
}

extension CollectorOutput {
    /// The spool's folder cannot be made (a path under a file, no permission, a read-only disk).
    public struct SpoolError: Error, Sendable, Equatable, CustomStringConvertible {
        public var directory: String
        /// The system's words.
        public var reason: String
        public var description: String { "cannot use the spool \(directory): \(reason)" }
    }
}
