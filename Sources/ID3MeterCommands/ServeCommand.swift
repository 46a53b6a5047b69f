import ArgumentParser
import Foundation
import Hummingbird
import ID3Meter
import ID3MeterReport
import ID3MeterServe
import Logging
import Prometheus
import ServiceLifecycle

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Meter every channel of a line-up in one process, and alert when a channel's tags stop.",
        discussion: """
            CONFIG is a YAML file: 'defaults' (optional) and 'channels', each with a unique \
            'name' and a 'url' (an HLS playlist or a DASH MPD), and optionally 'headers', 'variant', 'program', 'fps', 'ad_model', 'app_id', \
            'app_name', 'app_version', 'alert_after' (seconds, default 30), 'live_start', 'vod' \
            (true for a stream meant to end), and 'ca_file', 'client_cert', 'client_key' (files on \
            this machine: the file's only, never a channel added over the API). Each \
            channel is metered exactly as 'id3-meter URL' meters it, with its own engine and frame \
            clock. Records are JSON lines with a 'channel' field. A channel alerts (a record of \
            type 'alert' and a log line) when no Nielsen tag has been delivered for alert_after \
            seconds, when only invalid or placeholder-CID tags arrived for that long, or when its \
            live playlist has not advanced for three target durations; the alert ends when that \
            is over. Each channel's tags also go through the QA report's checks (as 'scan \
            --report'), over 15-minute windows: a channel failing one gets a failing_checks record \
            naming them. A stream that cannot be opened is opened again, after a pause growing to a \
            minute; so is a live channel whose playlist shows EXT-X-ENDLIST (a packager's glitch \
            may), resuming after its last delivered tag so that nothing is delivered twice. A \
            channel with vod: true ends at EXT-X-ENDLIST. A live playlist whose media sequence \
            goes back (an origin restart) is read on from its first segment not read yet; a jump \
            further than the stream could have gone is taken as a renumbering, not a loss; both \
            are said in a record of type 'warning'. Segments that left the window unread count \
            in id3meter_segments_failed_total.

            The HTTP API (--listen): GET /healthz and /readyz; GET /channels (each channel's state, last tag, \
            counts and alerts, as JSON); PUT /channels/NAME with a channel's JSON adds or replaces \
            it (409 when another shard holds it); DELETE /channels/NAME ends it; GET /metrics in Prometheus text format. \
            With --api-tokens, all but /healthz, /readyz and /metrics need a token (401 without one, \
            403 for a change with a read token); without tokens, --listen must be a loopback address. \
            Every change (add, replace, delete, a SIGHUP reload) is a log line, a record of type \
            'config_change' (action, by: the token's name, old_url, new_url) and \
            id3meter_config_changes_total.

            With --state DIR, a restarted serve (after a crash, a kill -9, a deploy) resumes each \
            channel after the last tag its records hold, when that tag's segment is still in the \
            playlist, and otherwise joins at the live edge with a record of type 'resume' saying \
            how many seconds were lost.

            SIGHUP reads CONFIG again and restarts only the channels that changed. SIGINT or \
            SIGTERM ends every channel (end() called, outputs flushed) and exits 0. Exit status 1 \
            when CONFIG cannot be used, naming its file, line and field, or the API cannot listen; \
            2 on a usage error.
            """)

    @Argument(help: ArgumentHelp("The line-up: a YAML file of channels.", valueName: "config"))
    var config: String

    @Option(help: "Output style.")
    var format: OutputStyle = .jsonl

    @Option(help: ArgumentHelp(
        "Meter only this instance's share of the line-up: I/N (I from 0), or 'auto': from the ordinal ending the meter's name (a StatefulSet pod id3-meter-4), with N from --shards or ID3METER_SHARDS.",
        valueName: "I/N|auto"))
    var shard: String?

    @Option(help: "Shards in all, for --shard auto.")
    var shards: Int?

    @Option(help: ArgumentHelp(
        "Instances metering each channel (or ID3METER_COPIES; 1 to 8, default 1). With --shard auto, ordinals 0 to N-1 are each shard's first copy, N to 2N-1 its second...",
        valueName: "K"))
    var copies: Int?

    @Option(parsing: .unconditional, help: "Channels the line-up may hold; a PUT of another is answered 429 (1 to 100000).")
    var maxChannels = 5_000

    @OptionGroup(title: "The HTTP API") var api: APIOptions<ServeListener>

    @Option(help: ArgumentHelp(
        "A URL scheme channels added over the API may use besides http and https (repeatable; e.g. srt). Such channels can reach what the scheme reaches: local files for file.",
        valueName: "scheme"))
    var apiAllowScheme: [String] = []

    @Option(help: ArgumentHelp(
        "The collector's database (an SQLite file or a postgres:// URL, as id3-meter collect keeps it): the live page links each channel to its last 7 days there (GET /report?channel=NAME&days=N).",
        valueName: "path|url"))
    var reportDatabase: String?

    @Option(help: ArgumentHelp("The time zone of --report-database's days (default: the system's, or TZ).", valueName: "zone"))
    var reportTimeZone: String?

    @OptionGroup var records: RecordOptions

    @OptionGroup(title: "Fetching (every channel; a channel's own headers are added)") var fetch: FetchOptions

    @Flag(help: "Show libav's messages and the engines' notices.")
    var verbose = false

    /// The name records carry as `meter`, and `--shard auto` reads its ordinal from.
    var meterName: String { records.meter ?? Self.hostName }

    /// `--shard` and `--copies` resolved.
    func placement() throws -> Placement {
        let environment = ProcessInfo.processInfo.environment
        let copies = try self.copies ?? environment["ID3METER_COPIES"].map {
            guard let copies = Int($0) else { throw ValidationError("ID3METER_COPIES must be a number, not '\($0)'") }
            return copies
        } ?? 1
        guard (1...Placement.maximumCopies).contains(copies) else {
            throw ValidationError("--copies must be 1 to \(Placement.maximumCopies), not \(copies)")
        }
        guard let shard else { return Placement(shard: nil, copies: copies)! }
        guard shard == "auto" else {
            guard let resolved = Shard(shard) else {
                throw ValidationError("--shard must be I/N with 0 <= I < N <= 10000, or auto, not '\(shard)'")
            }
            return Placement(shard: resolved, copies: copies)!
        }
        guard let count = shards ?? environment["ID3METER_SHARDS"].flatMap({ Int($0) }) else {
            throw ValidationError("--shard auto needs the number of shards: --shards N or ID3METER_SHARDS")
        }
        guard let placement = Placement(ordinalOf: meterName, shards: count, copies: copies) else {
            throw ValidationError("--shard auto: the meter's name '\(meterName)' does not end in -I with I below \(count * copies)"
                                  + " (\(count) shard\(count == 1 ? "" : "s") × \(copies) cop\(copies == 1 ? "y" : "ies"))")
        }
        return placement
    }

    func validate() throws {
        _ = try placement()
        try NumberCheck.check(maxChannels, "--max-channels", in: 1...100_000)
        if let reportTimeZone, TimeZone(identifier: reportTimeZone) == nil { throw ValidationError("--report-time-zone: no zone named \(reportTimeZone)") }
        for scheme in apiAllowScheme where scheme.isEmpty || !scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) {
            throw ValidationError("--api-allow-scheme takes a URL scheme such as srt, not '\(scheme)'")
        }
    }

    func run() async throws {
        try await fetch.withConnections { try await run(through: $0) }
    }

    private func run(through connections: HTTPConnections) async throws {
        var logger = Logger(label: "id3-meter")
        logger.logLevel = verbose ? .debug : .notice
        LibAVLog.route(to: verbose ? logger : nil)

        let tokens = try api.checkedTokens(anyoneCould: "read and change the line-up", lines: "NAME read|write TOKEN")
        let tls = try api.tlsConfiguration()
        let lineupConfig: LineupConfig
        do { lineupConfig = try LineupConfig.load(config) } catch {
            Console.error("\(error)")
            throw ExitCode.failure
        }
        let records = try self.records.open(standardOutputLines: format.line, meterName: meterName)
        let recovered = records.recovered ?? ResumePoints()
        let output = records.set
        let registry = PrometheusCollectorRegistry()
        let lineup = Lineup(fetcher: fetch.fetcher(through: connections), output: output, logger: logger,
                            metrics: PrometheusMetricsFactory.lineup(registry: registry), resume: recovered)
        let placement = try placement()
        let shard = placement.shard
        let held = lineupConfig.held(by: shard)
        guard held.channels.count <= maxChannels else {
            Console.error("\(config): \(held.channels.count) channels for this instance, more than --max-channels \(maxChannels)")
            throw ExitCode.failure
        }
        await lineup.apply(held)
        let share = [shard.map { "shard \($0): \(held.channels.count) of \(lineupConfig.channels.count)" }, placement.copyDescription]
            .compactMap { $0 }.joined(separator: "; ")
        logger.notice("metering \(held.channels.count) channel\(held.channels.count == 1 ? "" : "s") from \(config)\(share.isEmpty ? "" : " (\(share))")")

        let reports = reportDatabase.map {
            (database: ReportDatabase($0), calendar: ReportCalendar(zone: reportTimeZone.flatMap(TimeZone.init(identifier:)) ?? .current))
        }
        let lineupAPI = LineupAPI(lineup: lineup, registry: registry, placement: placement, meter: meterName, outputs: output,
                                  policy: api.policy(tokens: tokens, maximumChannels: maxChannels, schemes: apiAllowScheme), reports: reports)
        let (host, port) = api.address!
        var serverLogger = logger
        serverLogger.logLevel = verbose ? .debug : .warning
        DescriptorLimit.raise()
        let app = Application(router: lineupAPI.router(), server: try lineupAPI.server(tls: tls),
                              // A queue of pending connections deep enough that a burst does not have the kernel
                              // drop a probe's SYN (a second's retransmit: a failed probe); the system caps it.
                              configuration: .init(address: .hostname(host, port: port), serverName: "id3-meter", backlog: 4_096),
                              onServerRunning: { [logger] channel in
                                  logger.notice("API on \(api.url(tls: tls != nil, port: channel.localAddress?.port ?? port))")
                              }, eventLoopGroupProvider: APIEventLoop.provider(), logger: serverLogger)
        let reload = ConfigReload(path: config, lineup: lineup, shard: shard, logger: logger)
        do {
            try await ServeServices.group(outputs: records, lineup: lineup, reload: reload, api: app, logger: serverLogger).run()
        } catch {
            Console.error("cannot serve the API on \(api.listen): \(error)")
            throw ExitCode.failure
        }
    }
}

extension ServeCommand {
    /// This host's name without its domain: in Kubernetes a StatefulSet pod's (`id3-meter-3`),
    /// which `--shard auto` takes its ordinal from and records name as their `meter`.
    static var hostName: String { ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "" }
}
