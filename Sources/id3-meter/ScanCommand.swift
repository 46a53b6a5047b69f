import ArgumentParser
import Foundation
import ID3Meter
import Logging

struct ScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List every Nielsen ID3 tag in files, folders, playlists and URLs.",
        discussion: """
            INPUT is a TS file, an HLS playlist (.m3u8, local or http/https; one variant of a \
            master playlist is read, as ID3 is the same in all), a folder (its .ts and .m3u8 files, \
            recursively, each tag once), or any URL libavformat reads (udp://, srt://).

            Output: one record per Nielsen tag on stdout, in stream order; a summary on stderr. \
            JSONL keys: type, source, segment, media_sequence, discontinuity_sequence, pts (90 kHz \
            ticks as carried), time (pts in seconds), program_date_time, payload (the string for \
            sendID3), pc_cid, fd_cid, pc_offset, fd_offset, breakout, valid, placeholder_pc_cid, \
            issues, id3_version.

            Exit status: 0 when every input was read, 1 when any input or segment could not be \
            (the others are still scanned), 2 on a usage error.
            """)

    @Argument(help: "Files, folders, playlists or URLs.")
    var inputs: [String]

    @Option(help: "Output format: jsonl, csv or text (default: text on a terminal, jsonl otherwise).")
    var format: RecordFormat?

    @Flag(help: "Also list every other ID3 frame (id, owner or description, size, pts), and undecodable packets.")
    var all = false

    @Option(help: ArgumentHelp("Variant of a master playlist to read: lowest, highest, or its position from 0.", valueName: "choice"))
    var variant = VariantChoice.lowestBandwidth

    @Option(help: "Seconds to wait on a stalled network read.")
    var timeout = 10.0

    @Flag(help: "Show libav's own messages.")
    var verbose = false

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be more than 0 seconds") }
    }

    func run() throws {
        var logger = Logger(label: "id3-meter")
        logger.logLevel = verbose ? .debug : .error
        LibAVLog.route(to: logger, verbose: verbose)

        let scanner = Scanner(variant: variant, fetcher: Fetcher(ioTimeout: timeout))
        let writer = (format ?? (isatty(STDOUT_FILENO) != 0 ? .text : .jsonl)).makeWriter()
        let output = StandardOutput()
        if let header = writer.header() { output.write(header) }

        var summary = ScanSummary()
        let expansion = InputExpansion.expand(inputs, scanner: scanner)
        expansion.failures.forEach { summary.count(.failure($0)) }
        for input in expansion.inputs {
            summary.inputs += 1
            scanner.scan(input) { event in
                summary.count(event)
                if case .failure(let failure) = event { printError("error: \(failure)") }
                for record in TagRecord.records(for: event, allFrames: all) where all || record.type != .malformed {
                    output.write(writer.line(for: record))
                }
            }
        }
        output.flush()
        summary.lines.forEach(printError)
        if !summary.failures.isEmpty { throw ExitCode.failure }
    }
}

extension RecordFormat: ExpressibleByArgument {}

extension VariantChoice: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Buffered stdout: one write per line is a syscall per tag on a big scan.
final class StandardOutput {
    private var buffer: [UInt8] = []

    func write(_ line: String) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        FileHandle.standardOutput.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}
