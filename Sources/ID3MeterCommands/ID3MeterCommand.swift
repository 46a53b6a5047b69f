import ArgumentParser
import ID3Meter
import Foundation
import Logging

extension ID3MeterCommand {
    /// Parses the process's arguments and runs the command. Usage errors exit 2 (not
    /// ArgumentParser's 64), like most media tools.
    public static func runAsMain() async {
        // stdout carries the records; every log line goes to stderr.
        LoggingSystem.bootstrap { _ in ConsoleLogHandler() }
        do {
            var command = try ID3MeterCommand.parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = ID3MeterCommand.exitCode(for: error)
            if code == .validationFailure {
                printError(ID3MeterCommand.fullMessage(for: error))
                Foundation.exit(2)
            }
            ID3MeterCommand.exit(withError: error)
        }
    }
}

public struct ID3MeterCommand: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "id3-meter",
        abstract: "Meter and scan the Nielsen DTVR ID3 tags of HLS, MPEG-DASH, MPEG-TS, packed audio and fMP4/CMAF streams.",
        discussion: """
            Nielsen DTVR tags are ID3 PRIV frames whose owner starts www.nielsen.com, carried as \
            timed ID3 in MPEG-TS (stream_type 0x15), at the head of packed audio segments, in \
            fMP4 emsg boxes, or in a DASH MPD's EventStream. The owner string is what a player passes to the Nielsen SDK's sendID3. \
            'id3-meter INPUT' plays a stream and calls sendID3 on time; 'id3-meter scan' lists and \
            checks every tag of files, folders, playlists, MPDs and URLs; 'id3-meter serve CONFIG' meters \
            a whole line-up of channels in one process, with alerts, an HTTP API and metrics; \
            'id3-meter spool' shows and handles the collector's waiting and refused batches; \
            'id3-meter collect' is the collector: it keeps the records meters post, each once, in a database.
            """,
        version: ID3MeterVersion.current,
        subcommands: [MeterCommand.self, ScanCommand.self, ServeCommand.self, SpoolCommand.self, CollectCommand.self, ReportCommand.self],
        defaultSubcommand: MeterCommand.self)
}

extension ID3MeterCommand {
    /// Parses `arguments` as the command line (validation included) and makes every value the run
    /// would derive from its numbers, without running anything. The options fuzz target calls it.
    public static func prepare(_ arguments: [String]) throws {
        switch try parseAsRoot(arguments) {
        case let meter as MeterCommand: meter.prepare()
        case let scan as ScanCommand: _ = scan.fetch.fetcher()
        default: break
        }
    }
}
