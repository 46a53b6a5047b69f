import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A collector spool as it lies on disk, for an operator (`id3-meter spool`): the batches
/// waiting to be sent, and the dead letters (batches the collector refused for good) with why.
/// A running meter takes a dead letter put back into the queue at its next batch interval.
package struct SpoolFolder {
    package struct Batch: Equatable {
        package var name: String
        package var records: Int
        package var bytes: UInt64
        /// For a dead letter: what the collector answered.
        package var reason: String?
    }

    package let directory: URL
    package var deadLetterFolder: URL { directory.appendingPathComponent("dead-letter") }

    package init(directory: URL) { self.directory = directory }

    /// Batch files waiting, oldest first (a split batch's parts in their order).
    package var pendingFiles: [URL] { Self.jsonLines(in: directory).filter { $0.lastPathComponent.hasPrefix("batch-") } }

    package var pending: [Batch] { pendingFiles.map { describe($0, reason: nil) } }

    package var deadLetters: [Batch] {
        Self.jsonLines(in: deadLetterFolder).map { file in
            let note = file.deletingPathExtension().appendingPathExtension("reason")
            return describe(file, reason: (try? String(contentsOf: note, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Puts the named dead letters (all when `names` is empty) back in the queue; the names put back.
    package func retry(_ names: [String]) throws -> [String] {
        try chosen(names).map { letter in
            // A memory batch's name does not start with "batch-": it is queued after the others.
            let name = letter.name.hasPrefix("batch-") ? letter.name : "batch-retried-\(letter.name)"
            let target = directory.appendingPathComponent("\(name).jsonl")
            guard rename(deadLetterFolder.appendingPathComponent("\(letter.name).jsonl").path, target.path) == 0 else {
                throw SpoolFolderError(reason: "cannot move \(letter.name) back: \(String(cString: strerror(errno)))")
            }
            unlink(deadLetterFolder.appendingPathComponent("\(letter.name).reason").path)
            return letter.name
        }
    }

    /// Deletes the named dead letters (all when `names` is empty); what was deleted.
    package func drop(_ names: [String]) throws -> [Batch] {
        try chosen(names).map { letter in
            guard unlink(deadLetterFolder.appendingPathComponent("\(letter.name).jsonl").path) == 0 else {
                throw SpoolFolderError(reason: "cannot delete \(letter.name): \(String(cString: strerror(errno)))")
            }
            unlink(deadLetterFolder.appendingPathComponent("\(letter.name).reason").path)
            return letter
        }
    }

    private func chosen(_ names: [String]) throws -> [Batch] {
        let letters = deadLetters
        let unknown = names.filter { name in !letters.contains { $0.name == name } }
        guard unknown.isEmpty else { throw SpoolFolderError(reason: "no dead letter named \(unknown.joined(separator: ", "))") }
        return names.isEmpty ? letters : letters.filter { names.contains($0.name) }
    }

    private func describe(_ file: URL, reason: String?) -> Batch {
        let data = FileManager.default.contents(atPath: file.path) ?? Data()
        return Batch(name: file.deletingPathExtension().lastPathComponent, records: data.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) },
                     bytes: UInt64(data.count), reason: reason)
    }

    private static func jsonLines(in folder: URL) -> [URL] {
        ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [])
            .filter { $0.pathExtension == "jsonl" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}

package struct SpoolFolderError: Error, CustomStringConvertible {
    package var reason: String
    package var description: String { reason }
}
