import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ID3Meter
import ID3MeterReport
import Logging
import Synchronization

struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List every Nielsen ID3 tag in files, folders, playlists, MPDs and URLs, and check them.",
        discussion: """
            INPUT is an MPEG-TS file, an HLS playlist (.m3u8, local or http/https; one variant of a \
            master playlist is read, as ID3 is the same in all, with its audio rendition), an \
            MPEG-DASH MPD (.mpd: every Period, the Representation that carries the tags, a live \
            one as its time-shift buffer holds it now), packed \
            audio (AAC/ADTS, MP3, AC-3, E-AC-3), fragmented MP4/CMAF (emsg), a folder (its \
            \(InputExpansion.folderExtensions.map { "." + $0 }.joined(separator: " ")) files, recursively, \
            each tag once), a quoted glob, '-' (a list of inputs on standard input, one a line), or \
            a udp://, srt://, rtp:// or tcp:// stream. Inputs are scanned --jobs at a time.

            Output: one record per Nielsen tag on stdout, in input order and then stream order \
            (--unordered: as inputs finish); a summary on stderr, with progress when it is a \
            terminal. JSONL keys: type, source, segment, media_sequence, discontinuity_sequence, \
            pts (90 kHz ticks as carried), time (pts in seconds), program_date_time, payload (the \
            string for sendID3), pc_cid, fd_cid, pc_offset, fd_offset, breakout, valid, \
            placeholder_pc_cid, issues, id3_version; for DASH also period, representation, \
            segment_time (media_sequence is the segment's $Number$); for MPEG-TS program and pid \
            (every program is read, each a tag stream of its own, unless --program picks one); \
            for a tag of an HLS interstitial's asset, interstitial (its ID).

            --report writes the QA report: per source, one row per check in the terms of Nielsen's \
            ID3 Tag Validator (user guide 1.8F: its test number, Pass or Fail as \
            <errors/minimum/tolerated>, "No status" for what needs Nielsen's keys or does not apply \
            to the carriage), then the findings with their times. Tags are DATA or INFO (both CIDs \
            null, both offsets 0); each tag stream (TS PID, emsg scheme) is judged on its own. \
            Judged: the DATA tag count (test 1), the tag format and 271-byte envelope (2), DATA \
            tags under 4 s or over 12 s apart and over 19 s apart (proxies for tests 5 and 4), a \
            null CID with an offset (8), the breakout code, INFO tags over 310 s apart (12-13), \
            tags more than 15 s from the program's audio (22), PC and FD offsets that drift from the PTS \
            (a proxy for 23), the owner (25), a PTS on each metadata PES (26), packets that do not \
            decode (28), the PMT's metadata descriptor, one tag per PES, the Nielsen emsg's value, \
            duplicates, placeholder PC CIDs for over 20 s, and the first to the last DATA tag \
            against the media's duration (within 20 s). Listed without failing: placeholder \
            tags, PTS discontinuities, segments without a tag, what was read leniently. \
            docs/QA.md says what each rests on. As FILE.html it is one self-contained page: the \
            checks, a summary, then each source's tags on a timeline (gaps shaded, breaks and \
            tagless segments marked, details on click).

            SIGINT or SIGTERM stops the scan: the inputs being read stop where they are, no other \
            is started, and the records, the summary and a report of what was read (marked \
            incomplete) are written; exit status 130 or 143. The report file is written whole at \
            the end, never left empty or half-written.

            --all-renditions reads each rendition of a master playlist or MPD as a source of its \
            own (named INPUT [URI or Representation id]) and compares their Nielsen tags by \
            payload: a rendition without any while others of its kind (variants, audio \
            renditions, a DASH content type) carry them, tags most renditions covering that \
            time carry and it lacks (missing) or it carries and most lack (extra), and tags more \
            than a frame from the other renditions' (offset). The check 'renditions' fails \
            naming each rendition at fault; the report shows a table of them.

            Exit status: 0 when every input was read (one without timed ID3, or a recording cut \
            short, is a warning), 1 when any input or segment could not be read, bytes were \
            skipped as damaged (the others are still scanned), or stdout refused records (how many \
            bytes is said), 2 on a usage error, 3 with --strict \
            when any check failed (past its tolerance: --tolerance).
            """)

    @Argument(help: "Files, folders, playlists, URLs, quoted globs, or - for a list on stdin.")
    var inputs: [String]

    @Option(help: "Output format: jsonl, csv or text (default: text on a terminal, jsonl otherwise).")
    var format: RecordFormat?

    @Flag(help: "Also list every other ID3 frame (id, owner or description, size, pts), and undecodable packets.")
    var all = false

    @Option(parsing: .unconditional, help: """
        Threads a scan uses, 1 to 1024 (default: the number of cores): inputs scanned at once; with \
        fewer inputs than that, a local MPEG-TS file of 64 MB or more is read in blocks on the \
        threads to spare, and any other input's records are made beside its reading.
        """)
    var jobs: Int?

    @Flag(help: "Write each input's records as it finishes, not in input order.")
    var unordered = false

    @Option(help: ArgumentHelp("Write the QA report to FILE, or - for stdout (then no records are written).", valueName: "file"))
    var report: String?

    @Option(help: "QA report format: text, json or html (default: by the file's extension, .json or .html, else text).")
    var reportFormat: ReportFormat?

    @Flag(help: "Exit 3 when any QA check fails.")
    var strict = false

    @Flag(help: ArgumentHelp("""
        Read every rendition of a master playlist (each variant, as a player plays it with its \
        audio rendition, and each audio rendition alone) or MPD (each audio and video \
        Representation), and compare their tags (the QA check 'renditions').
        """))
    var allRenditions = false

    @Option(help: ArgumentHelp("""
        The most errors a QA check passes with, as CHECK=N (repeatable; the defaults are the \
        Validator guide's where it gives one: \(QATolerances.guide.keys.sorted().map { "\($0)=\(QATolerances.guide[$0]!)" }.joined(separator: ", ")).
        """, valueName: "check=n"))
    var tolerance: [String] = []

    @Flag(help: "No progress and no summary; errors only.")
    var quiet = false

    @OptionGroup(title: "Fetching") var fetch: FetchOptions

    @Flag(help: "Show libav's own messages.")
    var verbose = false

    func validate() throws {
        if let problem = inputs.lazy.compactMap(Location.problem(withInput:)).first { throw ValidationError(problem) }
        try NumberCheck.check(jobs, "--jobs", in: 1...1_024)
        _ = try tolerances()
        if let report, report != "-", !WritablePath.isWritable(report) {
            throw ValidationError("cannot write --report \(report)")
        }
    }

    /// `--tolerance` over the guide's figures; a usage error names the entry that is wrong.
    func tolerances() throws -> QATolerances {
        var overrides: [String: Int] = [:]
        for entry in tolerance {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, QATolerances.guide[parts[0]] != nil else {
                throw ValidationError("--tolerance \(entry): expected CHECK=N, CHECK one of \(QATolerances.names.joined(separator: ", "))")
            }
            guard let value = Int(parts[1]), (0...1_000_000).contains(value) else {
                throw ValidationError("--tolerance \(entry): N must be a whole number from 0 to 1000000")
            }
            overrides[parts[0]] = value
        }
        return QATolerances(overrides)
    }

    func run() async throws {
        try await fetch.withConnections { try await run(through: $0) }
    }

    private func run(through connections: HTTPConnections) async throws {
        let tolerances = try tolerances()
        var logger = Logger(label: "id3-meter")
        logger.logLevel = verbose ? .debug : .error
        LibAVLog.route(to: verbose ? logger : nil)

        // Checked now, once the whole command line is valid and before any work, by making and
        // removing a file beside it: the report itself is written once, whole, at the end (one
        // truncated here would be left empty by a kill).
        if let report, report != "-" {
            let probe = URL(fileURLWithPath: report).deletingLastPathComponent().appendingPathComponent(".id3-meter-report-\(getpid())").path
            let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw ValidationError("cannot write --report \(report): \(String(cString: strerror(errno)))") }
            close(descriptor)
            unlink(probe)
        }
        let progress = ScanProgress()
        var scanner = TagScanner(variant: fetch.variant, fetcher: fetch.fetcher(through: connections), progress: progress)
        scanner.programs = fetch.programs
        let recordFormat = report == "-" ? nil : format ?? (isatty(STDOUT_FILENO) != 0 ? .text : .jsonl)
        let display = quiet || isatty(STDERR_FILENO) == 0 ? nil : ProgressDisplay(progress: progress)
        let output = OrderedOutput(display: display)
        if let header = recordFormat?.makeWriter().header() { output.write(header) }

        // The HTML report draws every tag: its builders record timelines, sharing one budget of details.
        let timelines = report.map(reportFormat(for:)) == .html ? DetailBudget(limit: Self.detailedTags) : nil
        let results = ScanResults()
        let expansion = await InputExpansion.expand(inputs, scanner: scanner)
        for failure in expansion.failures {
            Console.error(FlagHint.words(failure))
            var builder = SourceReportBuilder(source: failure.source, tolerances: tolerances, describing: FlagHint.words)
            builder.add(.failure(failure))
            var counted = ScanSummary()
            counted.count(.failure(failure))
            results.add(counted, builder.report)
        }
        let all = all, listingFindings = report != nil, unordered = unordered
        let namingSources = expansion.inputs.count > 1
        let streaming = unordered ? nil : output
        let batch = BatchScan(scanner: scanner, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount, ordered: !unordered)
        // With each input, its ladder: the place of its first rendition (a master named twice is two ladders).
        let (inputs, ladders) = allRenditions ? await Self.renditions(of: expansion.inputs, scanner: scanner)
            : (expansion.inputs.map { ScanInput($0) }, Array(expansion.inputs.indices))
        let interrupt = scanner.fetcher.interrupt
        let caught = try await withSignalsCancelling(onSignal: { interrupt.cancel() }) {
            await batch.run(inputs) { index, input in
                InputCollector(index: index, input: input, writer: recordFormat?.makeWriter(namingSources: namingSources), allFrames: all,
                               output: streaming, timeline: timelines.map { TimelineRecorder(details: .budget($0)) },
                               listingFindings: listingFindings, tolerances: tolerances)
            } deliver: { index, outcome in
                results.add(outcome.summary, outcome.report)
                if let tags = outcome.rendition { results.add(tags, of: inputs[index].location, at: index, ladder: ladders[index]) }
                display.writing { outcome.errors.forEach(printError) }
                output.finish(index, outcome.records)
            }
        }
        display?.stop()
        output.flush()
        var (summary, qa) = results.taken
        for comparison in results.comparisons {
            qa.add(comparison)
            for row in comparison.renditions {
                for fault in row.faults { printError(Console.line(.warning, "\(comparison.source) [\(row.name)]: \(comparison.words(for: fault, in: row))")) }
            }
        }
        if let caught {
            let read = qa.sources.count - expansion.failures.count
            qa.incomplete = "the scan was stopped by \(caught == SIGINT ? "SIGINT" : "SIGTERM") after \(read) of "
                + "\(expansion.inputs.count) input\(expansion.inputs.count == 1 ? "" : "s") (the last ones cut short)"
        }
        if let report { try write(qa, to: report) }
        if !quiet { summary.lines.forEach(printError) }
        if let failure = output.failure {
            Console.error("stdout: records could not be written (\(failure.reason)); \(failure.lostBytes) bytes of them were lost")
        }
        if let caught {
            printError("stopped by \(caught == SIGINT ? "SIGINT" : "SIGTERM"): \(qa.incomplete ?? "")")
            throw ExitCode(128 + caught)
        }
        if strict, !qa.passed { throw ExitCode(3) }
        if summary.failures > 0 || output.failure != nil { throw ExitCode.failure }
    }

    /// Each input's renditions, in the ladder's order, when it is a master playlist or an MPD;
    /// else the input itself, with a warning that it has no renditions to compare.
    private static func renditions(of inputs: [String], scanner: TagScanner) async -> ([ScanInput], ladders: [Int]) {
        var expanded: [ScanInput] = []
        var ladders: [Int] = []
        for input in inputs {
            let first = expanded.count
            defer { ladders += Array(repeating: first, count: expanded.count - first) }
            guard let ladder = await RenditionLadder.of(input, scanner: scanner), ladder.renditions.count > 1 else {
                printError(Console.line(.warning, "\(input): --all-renditions: not a master playlist or MPD of several renditions; read as it is"))
                expanded.append(ScanInput(input))
                continue
            }
            if ladder.listed > ladder.renditions.count {
                printError(Console.line(.warning, "\(input): \(ladder.listed) renditions listed; the first \(ladder.renditions.count) are compared"))
            }
            expanded += ladder.renditions.map { ScanInput(input, rendition: $0) }
        }
        return (expanded, ladders)
    }

    /// Payload fields kept for the HTML report's tags (valid ones, and again flagged ones), about
    /// 350 bytes each: past them a tag is drawn with its time and kind only, and the page says so.
    static let detailedTags = 10_000

    private func reportFormat(for destination: String) -> ReportFormat {
        if let reportFormat { return reportFormat }
        switch (destination as NSString).pathExtension.lowercased() {
        case "json": return .json
        case "html", "htm": return .html
        default: return .text
        }
    }

    private func write(_ qa: QAReport, to destination: String) throws {
        let text = switch reportFormat(for: destination) {
        case .json: qa.json() + "\n"
        case .html: qa.html()
        case .text: qa.text()
        }
        if destination == "-" {
            _ = LineWriter.appendWhole(Array(text.utf8), to: STDOUT_FILENO)
        } else {
            try text.write(toFile: destination, atomically: true, encoding: .utf8)
        }
    }
}

enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json, html
}

extension RecordFormat: ExpressibleByArgument {}

extension VariantChoice: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

/// One line on stderr, written whole with `write(2)`: `FileHandle.write` traps when stderr is a
/// file on a full disk, and a message is not worth the process.
func printError(_ line: String) {
    _ = LineWriter.appendWhole(Array((line + "\n").utf8), to: STDERR_FILENO)
}

/// What a scan has found so far: its inputs' summaries and reports, and the renditions' tags of
/// each presentation, added as each is delivered (in input order: a ladder's renditions together).
private final class ScanResults: Sendable {
    private let found = Mutex((ScanSummary(), QAReport()))
    private let ladders = Mutex<[Int: (source: String, renditions: [(Int, RenditionTags)])]>([:])

    func add(_ summary: ScanSummary, _ report: SourceReport) {
        found.withLock { found in
            found.0.merge(summary)
            found.1.add(report)
        }
    }

    /// `rendition`, the input at place `index`, of the ladder whose first rendition is at `ladder`.
    func add(_ rendition: RenditionTags, of source: String, at index: Int, ladder: Int) {
        ladders.withLock { $0[ladder, default: (source, [])].renditions.append((index, rendition)) }
    }

    var taken: (ScanSummary, QAReport) { found.withLock { $0 } }

    /// Each presentation's renditions compared, in input order.
    var comparisons: [RenditionComparison] {
        ladders.withLock { ladders in
            ladders.keys.sorted().map { key in
                let ladder = ladders[key]!
                return RenditionComparison(source: ladder.source, renditions: ladder.renditions.sorted { $0.0 < $1.0 }.map(\.1))
            }
        }
    }
}

/// One input's records, formatted, with its report and counts: built on the scanning thread.
/// When its input's turn in the output has come, records go straight out rather than pile up.
struct InputCollector: ScanCollector {
    struct Outcome: Sendable {
        var records: [UInt8] = []
        var report: SourceReport
        var summary = ScanSummary()
        var errors: [String] = []
        /// A rendition's tags, to compare with the other renditions'.
        var rendition: RenditionTags?
    }

    let index: Int
    let writer: (any RecordWriter)?
    let allFrames: Bool
    let output: OrderedOutput?
    private var outcome: Outcome
    private var report: SourceReportBuilder

    /// `listingFindings`: a report will be written, which lists the findings (else they are only counted).
    init(index: Int, input: ScanInput, writer: (any RecordWriter)?, allFrames: Bool, output: OrderedOutput?, timeline: TimelineRecorder?,
         listingFindings: Bool, tolerances: QATolerances) {
        self.index = index
        self.writer = writer
        self.allFrames = allFrames
        self.output = output
        report = SourceReportBuilder(source: input.name, timeline: timeline, listingFindings: listingFindings, tolerances: tolerances,
                                     describing: FlagHint.words)
        outcome = Outcome(report: report.report, rendition: input.rendition?.tags)
        outcome.summary.inputs = 1
    }

    mutating func add(_ event: MediaEvent) {
        outcome.summary.count(event)
        report.add(event)
        outcome.rendition?.add(event)
        guard let writer else { return }
        TagRecord.records(for: event, allFrames: allFrames) { record in
            guard allFrames || record.type != .malformed else { return }
            writer.append(record, to: &outcome.records)
            outcome.records.append(0x0A)
        }
        if outcome.records.count >= 1 << 16 { output?.writeIfCurrent(index, &outcome.records) }
    }

    /// The report, and the lines to print: what the report lists of failures and warnings (the
    /// first few of each kind, then how many more), each once.
    func finish() -> Outcome {
        var outcome = outcome
        outcome.report = report.report
        outcome.rendition?.readable = outcome.report.readable
        outcome.errors = outcome.report.failures.map { Console.line(.error, $0) } + outcome.report.warnings.map { Console.line(.warning, $0) }
        return outcome
    }
}

/// Records in input order, from whichever thread holds the current input: that one writes as it
/// goes, the others keep theirs until `finish` of the one before them.
// Unchecked: every var is read and written under `lock`.
final class OrderedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var current = 0
    private let output = StandardOutput()
    /// The progress line on the same terminal, moved out of the records' way.
    private let display: ProgressDisplay?

    init(display: ProgressDisplay?) { self.display = display }

    func write(_ line: String) { lock.withLock { display.writing { output.write(line) } } }

    /// Writes and empties `records` when input `index` is the one being written.
    func writeIfCurrent(_ index: Int, _ records: inout [UInt8]) {
        lock.withLock {
            guard index == current else { return }
            display.writing { output.write(bytes: records) }
            records.removeAll(keepingCapacity: true)
        }
    }

    /// The rest of input `index`'s records; the next input's turn begins.
    func finish(_ index: Int, _ records: [UInt8]) {
        lock.withLock {
            display.writing { output.write(bytes: records) }
            current = index + 1
        }
    }

    func flush() { lock.withLock { display.writing { output.flush() } } }

    /// Why stdout refused records, and how many bytes of them were lost; `nil` when none were.
    var failure: (reason: String, lostBytes: Int)? { lock.withLock { output.failure } }
}

/// Buffered stdout: one write per line is a syscall per tag on a big scan. A refused write (a
/// full disk, a closed pipe) is remembered, with the bytes it lost, for the scan to report.
final class StandardOutput {
    private var buffer: [UInt8] = []
    private(set) var failure: (reason: String, lostBytes: Int)?

    func write(_ line: String) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// A whole input's records: written as they are, not copied into the buffer.
    func write(bytes: [UInt8]) {
        flush()
        writeOut(bytes)
    }

    func flush() {
        writeOut(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeOut(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        if let error = LineWriter.appendWhole(bytes, to: STDOUT_FILENO) {
            failure = (failure?.reason ?? String(cString: strerror(error)), (failure?.lostBytes ?? 0) + bytes.count)
        }
    }
}

/// Runs `work`, cancelling it on SIGINT or SIGTERM, so that it can end cleanly; the signal that
/// came, if one did. The handlers are in place before the work starts: a signal in between would
/// otherwise be ignored. `onSignal` runs at the signal too (to stop blocking reads).
@discardableResult
func withSignalsCancelling(onSignal: @escaping @Sendable () -> Void = {}, _ work: @escaping @Sendable () async -> Void) async throws
    -> Int32? {
    let task = Mutex<Task<Void, Never>?>(nil)
    let caught = Mutex<Int32?>(nil)
    let sources = [SIGINT, SIGTERM].map { signalNumber in
        // Ignored first, so that only the dispatch source sees it, as libdispatch requires.
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber)
        source.setEventHandler {
            caught.withLock { $0 = $0 ?? signalNumber }
            onSignal()
            task.withLock { $0?.cancel() }
        }
        source.resume()
        return source
    }
    let running = Task { await work() }
    task.withLock { $0 = running }
    if caught.withLock({ $0 }) != nil { running.cancel() }
    await running.value
    sources.forEach { $0.cancel() }
    return caught.withLock { $0 }
}
