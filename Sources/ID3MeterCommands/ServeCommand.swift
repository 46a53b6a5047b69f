import ArgumentParser
import Dispatch
import Foundation
import ID3Meter
import ID3MeterServe
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Meter every channel of a line-up in one process, and alert when a channel's tags stop.",
        discussion: """
            CONFIG is a YAML file: 'defaults' (optional) and 'channels', each with a unique \
            'name' and a 'url', and optionally 'headers', 'variant', 'fps', 'ad_model', 'app_id', \
            'app_name', 'app_version', 'alert_after' (seconds, default 30) and 'live_start'. Each \
            channel is metered exactly as 'id3-meter URL' meters it, with its own engine and frame \
            clock. Records are JSON lines with a 'channel' field. A channel alerts (a record of \
            type 'alert' and a log line) when no Nielsen tag has been delivered for alert_after \
            seconds, when only invalid or placeholder-CID tags arrived for that long, or when its \
            live playlist has not advanced for three target durations; the alert ends when that \
            is over. A stream that cannot be opened or ends is opened again.

            SIGHUP reads CONFIG again and restarts only the channels that changed. SIGINT or \
            SIGTERM ends every channel (end() called, outputs flushed) and exits 0. Exit status 1 \
            when CONFIG cannot be used, naming its file, line and field; 2 on a usage error.
            """)

    @Argument(help: ArgumentHelp("The line-up: a YAML file of channels.", valueName: "config"))
    var config: String

    @Option(help: "Output style: jsonl or text (default: jsonl).")
    var format: OutputStyle = .jsonl

    @OptionGroup var records: RecordOptions

    @OptionGroup(title: "Fetching (every channel; a channel's own headers are added)") var fetch: FetchOptions

    @Flag(help: "Show libav's messages and the engines' notices.")
    var verbose = false

    func run() async throws {
        var logger = Logger(label: "id3-meter")
        logger.logLevel = verbose ? .debug : .notice
        LibAVLog.route(to: logger, verbose: verbose)

        let lineupConfig: LineupConfig
        do { lineupConfig = try LineupConfig.load(config) } catch {
            Console.error("\(error)")
            throw ExitCode.failure
        }
        let records = try self.records.open(style: format.style)
        let sending = records.sending
        let output = LineupOutput(records.outputs)
        let lineup = Lineup(fetcher: fetch.fetcher, output: output, logger: logger)
        await lineup.apply(lineupConfig.channels)
        logger.notice("metering \(lineupConfig.channels.count) channel\(lineupConfig.channels.count == 1 ? "" : "s") from \(config)")

        let path = config
        let reload = DispatchSource.makeSignalSource(signal: SIGHUP)
        signal(SIGHUP, SIG_IGN)
        reload.setEventHandler { [logger] in
            Task {
                do {
                    let changed = try LineupConfig.load(path)
                    await lineup.apply(changed.channels)
                    logger.notice("SIGHUP: \(path) read again, \(changed.channels.count) channels")
                } catch {
                    // A bad edit leaves the running line-up as it is.
                    Console.error("SIGHUP: \(error); the line-up is unchanged")
                }
            }
        }
        reload.resume()
        defer { reload.cancel() }

        try await withSignalsCancelling {
            // Runs until a signal cancels it; the channels run on tasks of their own.
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3_600)) }
        }
        await lineup.removeAll()
        await output.finish()
        await sending?.value
    }
}
