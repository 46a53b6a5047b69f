import Foundation

/// Records on disk until the collector has them. Each record is appended to `open.jsonl` the
/// moment it is written (a killed process loses nothing the kernel has); `seal()` turns the
/// open file into a numbered batch, and batches leave the spool only once delivered.
/// A spool found with an open file (a previous run was killed) seals it first.
final class Spool {
    let directory: URL
    /// Stays with the spool across runs, so a batch resent after a crash keeps its id and a
    /// collector can drop the copy.
    let identifier: String
    private var openFile: FileHandle?
    private var openCount = 0
    private var sequence: Int

    private var openURL: URL { directory.appendingPathComponent("open.jsonl") }
    /// The last batch number used: kept apart from the batches, which leave once delivered, so
    /// that a later run never reuses a number and a collector dropping repeated ids drops only
    /// real repeats.
    private var sequenceURL: URL { directory.appendingPathComponent("last-batch") }

    init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let identifierFile = directory.appendingPathComponent("spool-id")
        if let existing = try? String(contentsOf: identifierFile, encoding: .utf8), !existing.isEmpty {
            identifier = existing
        } else {
            identifier = UUID().uuidString
            try identifier.write(to: identifierFile, atomically: true, encoding: .utf8)
        }
        let numbered = try Self.batches(in: directory).compactMap { Int($0.deletingPathExtension().lastPathComponent.dropFirst(6)) }
        let recorded = (try? String(contentsOf: directory.appendingPathComponent("last-batch"), encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        sequence = max(numbered.max() ?? 0, recorded ?? 0)
        if FileManager.default.fileExists(atPath: openURL.path) {
            openCount = 1
            try seal()
        }
    }

    func append(_ line: String) throws {
        if openFile == nil {
            guard FileManager.default.createFile(atPath: openURL.path, contents: nil) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: openURL.path])
            }
            openFile = try FileHandle(forWritingTo: openURL)
        }
        try openFile?.write(contentsOf: Data((line + "\n").utf8))
        openCount += 1
    }

    /// Makes what was appended since the last seal a batch; nothing happens when nothing was.
    func seal() throws {
        guard openCount > 0 else { return }
        try openFile?.synchronize()
        try openFile?.close()
        openFile = nil
        openCount = 0
        sequence += 1
        try String(sequence).write(to: sequenceURL, atomically: true, encoding: .utf8)
        let batch = directory.appendingPathComponent(String(format: "batch-%012d.jsonl", sequence))
        if FileManager.default.fileExists(atPath: openURL.path) { try FileManager.default.moveItem(at: openURL, to: batch) }
    }

    /// Sealed batches, oldest first.
    func pendingBatches() throws -> [URL] { try Self.batches(in: directory) }

    private static func batches(in directory: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent.hasPrefix("batch-") && $0.pathExtension == "jsonl" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    func remove(_ batch: URL) throws {
        try FileManager.default.removeItem(at: batch)
    }
}
