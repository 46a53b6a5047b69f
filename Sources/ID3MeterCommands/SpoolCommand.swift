import ArgumentParser
import Foundation
import ID3Meter

struct SpoolCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spool",
        abstract: "List the collector spool's waiting batches and dead letters, send dead letters again, or drop them.",
        discussion: """
            A batch the collector refused for good (an answer other than 2xx, 408, 413, 429 or \
            5xx) is moved to the spool's dead-letter folder, with the answer beside it, and the \
            batches after it go on. 'list' shows what waits and what was refused; 'retry' puts \
            dead letters back in the queue (a running meter sends them within a second; another \
            sends them when it starts); 'drop' deletes them: their records are then lost for \
            good, and the command says how many. NAME is a dead letter's name as 'list' shows it; \
            none means every one. Exit status 1 when a name is unknown or a file cannot be moved.
            """)

    enum Action: String, ExpressibleByArgument, CaseIterable { case list, retry, drop }

    @Argument(help: "list, retry or drop.")
    var action: Action = .list

    @Argument(help: ArgumentHelp("Dead letters to retry or drop (default: all).", valueName: "name"))
    var names: [String] = []

    @Option(help: "The spool folder (default: ~/.cache/id3-meter/spool).")
    var spool: String?

    func validate() throws {
        if action == .list, !names.isEmpty { throw ValidationError("'list' takes no names") }
    }

    func run() throws {
        let folder = SpoolFolder(directory: RecordOptions.spoolDirectory(spool))
        do {
            switch action {
            case .list:
                let pending = folder.pending, letters = folder.deadLetters
                print("\(folder.directory.path): \(pending.count) batch\(pending.count == 1 ? "" : "es") waiting "
                      + "(\(pending.reduce(0) { $0 + $1.records }) records), \(letters.count) dead letter\(letters.count == 1 ? "" : "s")")
                for batch in pending { print("  waiting      \(batch.name)  \(batch.records) records, \(batch.bytes) bytes") }
                for letter in letters {
                    print("  dead letter  \(letter.name)  \(letter.records) records, \(letter.bytes) bytes: \(letter.reason ?? "no reason kept")")
                }
            case .retry:
                let moved = try folder.retry(names)
                print("\(moved.count) dead letter\(moved.count == 1 ? "" : "s") put back in the queue\(moved.isEmpty ? "" : ": ")"
                      + moved.joined(separator: ", "))
            case .drop:
                let dropped = try folder.drop(names)
                print("\(dropped.count) dead letter\(dropped.count == 1 ? "" : "s") deleted: "
                      + "\(dropped.reduce(0) { $0 + $1.records }) records will never reach the collector")
            }
        } catch {
            Console.error("spool \(folder.directory.path): \(error)")
            throw ExitCode.failure
        }
    }
}
