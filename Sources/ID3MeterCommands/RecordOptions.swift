import ArgumentParser
import Foundation
import ID3Meter
import ServiceLifecycle

/// Where meter records go besides stdout: a file and a collector with its spool, and the state
/// folder that makes a restart resume where they end. The same flags for the single-stream
/// meter and `serve`.
struct RecordOptions: ParsableArguments {
    @Option(help: "Also write JSON lines to this file (appended; rotated as --output-max-size and --output-max-age say).")
    var output: String?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Rotate --output at this size (K, M, G): it is renamed FILE.YYYYMMDDTHHMMSSZ (UTC) and a new FILE begun.",
        valueName: "size"))
    var outputMaxSize = ByteSize(bytes: 256 << 20)

    @Option(parsing: .unconditional, help: ArgumentHelp("Rotate --output after this many seconds, too.", valueName: "seconds"))
    var outputMaxAge: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Rotated --output files kept, the oldest removed (default: all).", valueName: "count"))
    var outputKeep: Int?

    @Option(help: "POST each batch of records as JSON to this collector URL.")
    var collector: String?

    @Option(help: ArgumentHelp(
        "A file holding the collector's token, sent as 'Authorization: Bearer TOKEN' with every batch (or the token in ID3METER_COLLECTOR_TOKEN).",
        valueName: "file"))
    var collectorTokenFile: String?

    @Option(help: "Folder for records not yet accepted by the collector (default: ~/.cache/id3-meter/spool).")
    var spool: String?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Disk the spool may take (K, M, G). Past it, and while its disk refuses writes, records are held in memory (64 MB) and sent from there; past that the oldest are dropped, counted and said in a 'loss' record.",
        valueName: "size"))
    var spoolMaxSize = ByteSize(bytes: 1 << 30)

    @Option(help: ArgumentHelp(
        "Keep a checkpoint in this folder and, on start, resume each stream after the last tag the records (--output or the collector's spool) hold, when its segment is still in the playlist.",
        valueName: "dir"))
    var state: String?

    @Option(help: ArgumentHelp(
        "The name every record carries as 'meter', to tell two meters of a channel apart (serve: by default the host's name, as a Kubernetes pod's).",
        valueName: "name"))
    var meter: String?

    var spoolDirectory: URL { Self.spoolDirectory(spool) }

    /// `--spool`, or the default under the cache folder.
    static func spoolDirectory(_ spool: String?) -> URL {
        if let spool { return URL(fileURLWithPath: spool) }
        let cache = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return cache.appendingPathComponent("id3-meter/spool")
    }

    func validate() throws {
        try NumberCheck.check(outputMaxSize.bytes, "--output-max-size", in: 4_096...(1 << 50))
        try NumberCheck.check(outputMaxAge, "--output-max-age", in: 1...315_360_000, unit: " seconds")
        try NumberCheck.check(outputKeep, "--output-keep", in: 1...1_000_000)
        try NumberCheck.check(spoolMaxSize.bytes, "--spool-max-size", in: 4_096...(1 << 50))
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

    var rotation: StreamOutput.Rotation {
        StreamOutput.Rotation(maximumBytes: UInt64(outputMaxSize.bytes), maximumAge: outputMaxAge, keep: outputKeep)
    }

    /// The outputs, stdout first, made only when the run starts: a usage error leaves the disk
    /// alone, and an output that cannot be opened is a one-line error (exit 1). A collector
    /// starts sending at once; `RecordOutputs.finish()` flushes it.
    /// `meterName`: the `meter` the records carry when `--meter` does not say.
    func open(standardOutputLines line: @escaping @Sendable (MeterRecord) -> [UInt8], meterName: String? = nil) throws -> RecordOutputs {
        // Read back before the collector's spool seals its open file or anything is written.
        let checkpoint: CheckpointOutput?
        var recovered: ResumePoints?
        if let state {
            let directory: StateDirectory
            do throws(StateError) { directory = try StateDirectory(directory: URL(fileURLWithPath: state)) } catch {
                Console.error("--state \(error.directory): \(error.reason)")
                throw ExitCode.failure
            }
            let recovery = directory.recover(recordsFile: output, spool: collector == nil ? nil : spoolDirectory)
            recovery.notes.forEach { Console.warning("--state \(state): \($0)") }
            recovered = recovery.points
            checkpoint = CheckpointOutput(state: directory, recovered: recovery.points, recordsFile: output)
        } else {
            checkpoint = nil
        }
        var outputs: [any MeterOutput] = [StreamOutput(standardOutputLines: line)]
        if let output {
            do {
                let file = try StreamOutput(appendingTo: output, rotation: rotation)
                file.openingNotes.forEach { Console.warning("--output \($0)") }
                outputs.append(file)
            } catch {
                Console.error("cannot open --output \(error.path): \(error.reason)")
                throw ExitCode.failure
            }
        }
        var collectorOutput: CollectorOutput?
        if let collector, let url = URL(string: collector) {
            var settings = CollectorOutput.Settings()
            settings.spoolMaximumBytes = UInt64(spoolMaxSize.bytes)
            if let token = try collectorToken() { settings.headers = [Fetcher.Header(name: "Authorization", value: "Bearer \(token)")] }
            let output: CollectorOutput
            do {
                output = try CollectorOutput(collector: url, spoolDirectory: spoolDirectory, settings: settings, onError: { Console.warning($0) },
                                             accepted: { await checkpoint?.collectorAccepted($0) })
            } catch {
                Console.error("cannot use --spool \(error.directory): \(error.reason)")
                throw ExitCode.failure
            }
            outputs.append(output)
            collectorOutput = output
        }
        // Last: it must see a record only once every other output has it.
        if let checkpoint { outputs.append(checkpoint) }
        let set = OutputSet(outputs, meter: meter ?? meterName) { notice in
            if case .loss(let loss) = notice.content { Console.error(loss.message) } else { Console.warning(notice.message ?? "") }
        }
        return RecordOutputs(set: set, collector: collectorOutput, recovered: recovered)
    }
}

/// The outputs a run writes its records to, as a service (`OutputService`), and what `--state`
/// recovered from them.
struct RecordOutputs: Service {
    var set: OutputSet
    var collector: CollectorOutput?
    /// With `--state`: each channel's last recorded delivery (`""` for the single-stream meter).
    var recovered: ResumePoints?

    func run() async {
        await OutputService(set, collectors: collector.map { [$0] } ?? []).run()
    }
}

extension RecordOptions {
    /// The collector's token: `--collector-token-file`'s first line, else ID3METER_COLLECTOR_TOKEN.
    func collectorToken() throws -> String? {
        guard let collectorTokenFile else {
            let variable = ProcessInfo.processInfo.environment["ID3METER_COLLECTOR_TOKEN"]?.trimmingCharacters(in: .whitespacesAndNewlines)
            return variable.flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let text = try? String(contentsOfFile: collectorTokenFile, encoding: .utf8),
              let token = text.split(whereSeparator: \.isNewline).first?.trimmingCharacters(in: .whitespaces), !token.isEmpty else {
            Console.error("--collector-token-file \(collectorTokenFile): no token in it (a readable file whose first line is the token)")
            throw ExitCode.failure
        }
        return token
    }
}
