import ArgumentParser
import Foundation
import ID3Meter

/// Where meter records go besides stdout: a file and a collector with its spool, and the state
/// folder that makes a restart resume where they end. The same flags for the single-stream
/// meter and `serve`.
struct RecordOptions: ParsableArguments {
    @Option(help: "Also write JSON lines to this file (appended).")
    var output: String?

    @Option(help: "POST each batch of records as JSON to this collector URL.")
    var collector: String?

    @Option(help: "Folder for records not yet accepted by the collector (default: ~/.cache/id3-meter/spool).")
    var spool: String?

    @Option(help: ArgumentHelp(
        "Keep a checkpoint in this folder and, on start, resume each stream after the last tag the records (--output or the collector's spool) hold, when its segment is still in the playlist.",
        valueName: "dir"))
    var state: String?

    var spoolDirectory: URL {
        if let spool { return URL(fileURLWithPath: spool) }
        let cache = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return cache.appendingPathComponent("id3-meter/spool")
    }

    func validate() throws {
        if let collector {
            guard let url = URL(string: collector), ["http", "https"].contains(url.scheme?.lowercased()), url.host != nil else {
                throw ValidationError("--collector must be an http or https URL, not '\(collector)'")
            }
        }
        // The spool itself is made when the collector starts, not here.
        if collector != nil || spool != nil, !WritablePath.isWritable(spoolDirectory.path) {
            throw ValidationError("cannot write to --spool \(spoolDirectory.path)")
        }
        if let output, !WritablePath.isWritable(output) { throw ValidationError("cannot write --output \(output)") }
        if let state {
            // Stdout is gone once written: only records on disk tell a restart what was delivered.
            guard output != nil || collector != nil else {
                throw ValidationError("--state needs --output or --collector: a restart resumes from the records they keep")
            }
            guard WritablePath.isWritable(state) else { throw ValidationError("cannot write to --state \(state)") }
        }
    }

    /// The outputs, stdout first, made only when the run starts: a usage error leaves the disk
    /// alone. A collector starts sending at once; `RecordOutputs.finish()` flushes it.
    func open(style: StreamOutput.Style) throws -> RecordOutputs {
        // Read back before the collector's spool seals its open file or anything is written.
        let checkpoint: CheckpointOutput?
        var recovered: ResumePoints?
        if let state {
            let directory: StateDirectory
            do { directory = try StateDirectory(directory: URL(fileURLWithPath: state)) } catch {
                Console.error("\(error)")
                throw ExitCode.failure
            }
            let recovery = directory.recover(recordsFile: output, spool: collector == nil ? nil : spoolDirectory)
            recovery.notes.forEach { Console.warning("--state \(state): \($0)") }
            recovered = recovery.points
            checkpoint = CheckpointOutput(state: directory, recovered: recovery.points, recordsFile: output)
        } else {
            checkpoint = nil
        }
        var outputs: [any MeterOutput] = [StreamOutput(handle: .standardOutput, style: style)]
        if let output {
            do { outputs.append(try StreamOutput(appendingTo: output)) } catch {
                throw ValidationError("cannot write --output \(output): \(error.localizedDescription)")
            }
        }
        var sending: Task<Void, Never>?
        if let collector, let url = URL(string: collector) {
            let output: CollectorOutput
            do {
                output = try CollectorOutput(collector: url, spoolDirectory: spoolDirectory, onError: { Console.warning($0) },
                                             accepted: { checkpoint?.collectorAccepted($0) })
            } catch {
                throw ValidationError("cannot use --spool \(spoolDirectory.path): \(error.localizedDescription)")
            }
            outputs.append(output)
            sending = Task { await output.run() }
        }
        // Last: it must see a record only once every other output has it.
        if let checkpoint { outputs.append(checkpoint) }
        return RecordOutputs(outputs: outputs, sending: sending, recovered: recovered)
    }
}

/// The outputs a run writes its records to, and the collector's sending task.
struct RecordOutputs {
    var outputs: [any MeterOutput]
    var sending: Task<Void, Never>?
    /// With `--state`: each channel's last recorded delivery (`""` for the single-stream meter).
    var recovered: ResumePoints?

    /// Flushes every output and waits until the collector has everything or has spooled it.
    func finish() async {
        for output in outputs { await output.finish() }
        await sending?.value
    }
}
