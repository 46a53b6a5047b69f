import ArgumentParser
import Foundation
import Hummingbird
import ID3MeterServe
import Logging
import Prometheus
import ServiceLifecycle

struct CollectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collect",
        abstract: "Take the records meters post (--collector URL) and keep each once, in a database.",
        discussion: """
            The other end of docs/COLLECTOR.md. Meters post batches of records to http://HOST:PORT/records \
            (or /); each batch is kept once by its id (a resend is answered 200 and not kept again), \
            and each delivery once per (channel, tag_id) across redundant meters, the first to arrive. \
            A batch is committed to the database before it is answered 200. Answers: 200 kept (or kept \
            before); 400 not a batch of records (the meter dead-letters it); 413 larger than \
            --max-batch-size (the meter splits it); 401/403 without a write token when --api-tokens is \
            given; 503 the database cannot take it now (a full disk, a server away: the meter sends \
            it again). GET /healthz, /readyz and /metrics as serve has them.

            --database is an SQLite file, created if need be (nothing to install), or a PostgreSQL \
            URL (several collectors may share one database). The schema is made, or brought up to \
            date, at start. Records older than --keep, and batch ids received before it, are \
            deleted at start and every hour; on PostgreSQL records go a day (UTC) at a time, once \
            all of it is older.

            SIGINT or SIGTERM stops taking batches, finishes those being stored and exits 0. Exit \
            status 1 when the database or the listener cannot be used; 2 on a usage error.
            """)

    @Option(help: ArgumentHelp(
        "Where records are kept: an SQLite file (created if need be), or a PostgreSQL database: postgres://USER:PASSWORD@HOST:PORT/DATABASE (?sslmode=require for TLS).",
        valueName: "path|url"))
    var database: String

    @Option(help: ArgumentHelp("How long records and batch ids are kept: a number of days (400d), hours (36h) or minutes (90m).",
                               valueName: "period"))
    var keep = Period(seconds: 400 * 86_400)

    @Option(help: ArgumentHelp("The largest batch taken (K, M or G); a larger one is answered 413, and the meter splits it.",
                               valueName: "size"))
    var maxBatchSize = ByteSize(bytes: CollectorAPI.defaultMaximumBatchBytes)

    @OptionGroup var api: APIOptions<CollectListener>

    @Flag(name: .shortAndLong, help: "Log each request.")
    var verbose = false

    func validate() throws {
        try NumberCheck.check(maxBatchSize.bytes, "--max-batch-size", in: 1_024...(1 << 30))
        try NumberCheck.check(keep.seconds, "--keep", in: 60...(100 * 365 * 86_400))
    }

    func run() async throws {
        var logger = Logger(label: "id3-meter")
        logger.logLevel = verbose ? .debug : .notice
        let tokens = try api.checkedTokens(anyoneCould: "post records", lines: "NAME write TOKEN")
        let tls = try api.tlsConfiguration()
        let store: any RecordStore
        do {
            store = database.hasPrefix("postgres://") || database.hasPrefix("postgresql://")
                ? try await PostgresRecordStore.open(url: database, logger: logger)
                : try await SQLiteRecordStore.open(path: database, logger: logger)
        } catch {
            Console.error("--database: \(error)")
            throw ExitCode.failure
        }
        let registry = PrometheusCollectorRegistry()
        let collector = CollectorAPI(store: store, registry: registry, policy: api.policy(tokens: tokens, maximumChannels: 1),
                                     maximumBatchBytes: maxBatchSize.bytes, logger: logger)
        let (host, port) = api.address!
        var serverLogger = logger
        serverLogger.logLevel = verbose ? .debug : .warning
        let app = Application(router: collector.router(), server: try collector.server(tls: tls),
                              configuration: .init(address: .hostname(host, port: port), serverName: "id3-meter", backlog: 4_096),
                              onServerRunning: { [logger] channel in
                                  logger.notice("collecting on \(api.url(tls: tls != nil, port: channel.localAddress?.port ?? port))")
                              }, eventLoopGroupProvider: APIEventLoop.provider(), logger: serverLogger)
        let retention = Retention(store: store, keep: .seconds(keep.seconds), logger: logger)
        let folding = HourFolding(store: store, logger: logger)
        // The store closes last (retention's part): the API first stops taking batches, then the fold stops.
        let group = ServiceGroup(configuration: .init(services: [.init(service: retention), .init(service: folding), .init(service: app)],
                                                      gracefulShutdownSignals: [.sigterm, .sigint], logger: serverLogger))
        do {
            try await group.run()
        } catch {
            Console.error("cannot collect on \(api.listen): \(error)")
            throw ExitCode.failure
        }
    }
}

/// A length of time written with a unit: `400d`, `36h`, `90m`, or seconds alone.
struct Period: ExpressibleByArgument, CustomStringConvertible {
    var seconds: Int

    init(seconds: Int) { self.seconds = seconds }

    init?(argument: String) {
        let units: [Character: Int] = ["d": 86_400, "h": 3_600, "m": 60, "s": 1]
        var text = Substring(argument.lowercased())
        let unit = text.last.flatMap { units[$0] }
        if unit != nil { text = text.dropLast() }
        guard let count = Int(text), count > 0 else { return nil }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: unit ?? 1)
        guard !overflow else { return nil }
        self.seconds = seconds
    }

    var description: String {
        seconds % 86_400 == 0 ? "\(seconds / 86_400)d" : seconds % 3_600 == 0 ? "\(seconds / 3_600)h"
            : seconds % 60 == 0 ? "\(seconds / 60)m" : "\(seconds)s"
    }
}
