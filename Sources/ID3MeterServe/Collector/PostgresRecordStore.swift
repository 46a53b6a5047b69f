import Foundation
import ID3Meter
import ID3MeterReport
import Logging
#if PostgreSQL
import NIOSSL
import PostgresNIO

/// The records in a PostgreSQL database, for a fleet: several collectors may share it (each
/// batch one transaction; the unique keys decide between them). `postgres://USER:PASSWORD@HOST:PORT/DATABASE`,
/// with `?sslmode=require` for TLS (the system's authorities).
public final class PostgresRecordStore: RecordStore {
    private let client: PostgresClient
    private let running: Task<Void, Never>
    private let logger: Logger
    private let spans = ChannelSpanWrites()
    private let days = RecordDays()
    /// How long a fold or a change of the partitions waits for its lock.
    private let lockWait: Duration
    /// How long the first connection may take at start.
    static let connectTimeout = Duration.seconds(15)

    private init(client: PostgresClient, lockWait: Duration, logger: Logger) {
        self.client = client
        self.lockWait = lockWait
        self.logger = logger
        running = Task { await client.run() }
    }

    /// Connects to the database at `url` and brings its schema up to date; a database of
    /// another application, or of a newer version, is refused untouched.
    public static func open(url: String, logger: Logger) async throws(StoreError) -> PostgresRecordStore {
        try await open(url: url, writing: true, logger: logger)
    }

    /// As `open(url:logger:)`, a fold or a change of partitions giving up after `lockWait` for
    /// its lock, the first connection after `connectTimeout` (the tests' shorter waits).
    package static func open(url: String, lockWait: Duration, connectTimeout: Duration = connectTimeout,
                             logger: Logger) async throws(StoreError) -> PostgresRecordStore {
        try await open(url: url, writing: true, lockWait: lockWait, connectTimeout: connectTimeout, logger: logger)
    }

    /// Connects to the database at `url` to read it (a report): every transaction read-only, the
    /// schema checked, never changed.
    package static func openForReading(url: String, logger: Logger) async throws(StoreError) -> PostgresRecordStore {
        try await open(url: url, writing: false, logger: logger)
    }

    private static func open(url: String, writing: Bool, lockWait: Duration = .seconds(10), connectTimeout: Duration = connectTimeout,
                             logger: Logger) async throws(StoreError) -> PostgresRecordStore {
        guard let parts = URLComponents(string: url), ["postgres", "postgresql"].contains(parts.scheme), let host = parts.host,
              let user = parts.user, !user.isEmpty else {
            throw StoreError("not a database URL: postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
        let database = String(parts.path.drop { $0 == "/" })
        let secure = ["require", "verify-full"].contains(parts.queryItems?.first { $0.name == "sslmode" }?.value)
        let (port, password, name) = (parts.port ?? 5432, parts.password, database.isEmpty ? nil : database)
        var configuration = PostgresClient.Configuration(host: host, port: port, username: user, password: password, database: name,
                                                         tls: secure ? .require(.makeClientConfiguration()) : .disable)
        let readOnly = writing ? [] : [("default_transaction_read_only", "on")]
        configuration.options.additionalStartupParameters = readOnly
        let store = PostgresRecordStore(client: PostgresClient(configuration: configuration, backgroundLogger: logger),
                                        lockWait: lockWait, logger: logger)
        let server = "\(host):\(parts.port ?? 5432)"
        do {
            // A server that does not answer is said after a while, not after the pool's minute of retries.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // One connection first: the pool retries a refused login quietly, a connection says why.
                    let tls: PostgresConnection.Configuration.TLS = secure ? .require(try NIOSSLContext(configuration: .makeClientConfiguration())) : .disable
                    var probeConfiguration = PostgresConnection.Configuration(host: host, port: port, username: user, password: password,
                                                                              database: name, tls: tls)
                    probeConfiguration.options.additionalStartupParameters = readOnly
                    let probe = try await PostgresConnection.connect(configuration: probeConfiguration, id: 0, logger: logger)
                    try await probe.close()
                }
                group.addTask {
                    try await Task.sleep(for: connectTimeout)
                    throw StoreError("no answer in \(connectTimeout.components.seconds) s")
                }
                try await group.next()
                group.cancelAll()
            }
            // Not within that time: the server has answered, and bringing a large database up to
            // date (version 4 passes over every delivery once) takes as long as it takes.
            try await store.prepare(writing: writing, location: "the database \(name ?? user) at \(server)")
        } catch let refusal as StoreError {
            await store.close()
            throw refusal
        } catch {
            await store.close()
            throw StoreError("cannot use the PostgreSQL database at \(server): \(Self.words(error))")
        }
        return store
    }

    /// Checks the schema (`CollectorSchema.verdict`) and, `writing`, brings it up to date.
    private func prepare(writing: Bool, location: String) async throws {
        try await client.withTransaction(logger: logger) { connection in
            var tables: [String] = []
            let names = try await connection.query("SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema()",
                                                   logger: logger)
            for try await (name) in names.decode(String.self) { tables.append(name) }
            func version() async throws -> Int? {
                guard tables.contains("schema_version") else { return nil }
                let rows = try await connection.query(PostgresQuery(unsafeSQL: CollectorSchema.currentVersion), logger: logger)
                var version = 0
                for try await (current) in rows.decode(Int.self) { version = current }
                return version
            }
            if let refusal = CollectorSchema.verdict(tables: tables, version: try await version(), writing: writing, location: location) {
                throw refusal
            }
            guard writing else { return }
            _ = try await Self.run(CollectorSchema.Statement(CollectorSchema.versionTable), on: connection, logger: logger)
            // Two collectors starting at once: one migrates, the other waits and finds it done.
            _ = try await Self.run(CollectorSchema.Statement("LOCK TABLE schema_version IN EXCLUSIVE MODE"), on: connection, logger: logger)
            tables.append("schema_version")
            let version = try await version() ?? 0
            let migrations = CollectorSchema.migrations(.postgres)
            if version > 0 && version < migrations.count {
                logger.notice("bringing \(location) from schema version \(version) to \(migrations.count); a large database takes a while")
            }
            for (index, statements) in migrations.enumerated() where index + 1 > version {
                for statement in statements { _ = try await Self.run(CollectorSchema.Statement(statement), on: connection, logger: logger) }
                _ = try await Self.run(CollectorSchema.noteVersion(index + 1), on: connection, logger: logger)
            }
            days.load(try await Self.rows(CollectorSchema.recordPartitions, on: connection, logger: logger))
        }
    }

    /// A failure in words: PostgreSQL's own message when the server sent one (a refused login, a
    /// missing database), else the error as it is.
    private static func words(_ error: any Error) -> String {
        // A transaction's failure wraps the statement's (or the commit's): say that one.
        if let transaction = error as? PostgresTransactionError {
            if let failed = transaction.closureError { return words(failed) }
            if let failed = transaction.commitError { return "the commit failed: " + words(failed) }
            if let failed = transaction.beginError { return "the transaction could not begin: " + words(failed) }
            return "the transaction failed"
        }
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] { return message }
        return error.underlying.map { "\($0)" } ?? "\(error.code)"
    }

    public func store(_ batch: CollectedBatch) async throws(StoreError) -> StoreReceipt {
        let missing = days.missing(batch.records.lazy.map(\.record.sentAt), now: batch.receivedAt)
        if !missing.isEmpty { try await make(missing) }
        do {
            let stored = try await client.withTransaction(logger: logger) { [logger, spans] connection in
                try await CollectorSchema.store(batch, dialect: .postgres, spans: spans) { try await Self.rows($0, on: connection, logger: logger) }
            }
            spans.wrote(stored.spans)
            return stored.receipt
        } catch {
            throw StoreError("cannot store batch \(batch.id): \(Self.words(error))")
        }
    }

    public func purge(before time: Double) async throws(StoreError) -> Int {
        let deleted: Int
        do {
            deleted = try await client.withTransaction(logger: logger) { [logger] connection in
                _ = try await Self.run(CollectorSchema.purgeBatches(before: time), on: connection, logger: logger)
                for statement in CollectorSchema.purgeCoverage(before: time) { _ = try await Self.run(statement, on: connection, logger: logger) }
                var deleted = 0
                for statement in CollectorSchema.purgeOutside(before: time) { deleted += try await Self.run(statement, on: connection, logger: logger) }
                return deleted
            }
        } catch {
            throw StoreError("cannot delete records older than the retention: \(Self.words(error))")
        }
        do {
            // Alone (`RecordDays`): no batch holds a day table being dropped, or reads a
            // generation being started. A new generation starts now: it is the keys' age that
            // decides when it may go.
            let started = Date().timeIntervalSince1970
            let dropped = try await alone(holding: CollectorSchema.partitionLock) { connection in
                let names = try await Self.rows(CollectorSchema.partitions(before: time), on: connection, logger: self.logger).compactMap { $0[0].text }
                for name in names {
                    for statement in CollectorSchema.dropPartition(name) { _ = try await Self.run(statement, on: connection, logger: self.logger) }
                }
                if let newest = try await Self.rows(CollectorSchema.newestGeneration, on: connection, logger: self.logger).first,
                   let generation = newest[0].integer, let since = newest[1].real, since <= time {
                    let old = try await Self.rows(CollectorSchema.generations(before: generation), on: connection, logger: self.logger)
                        .compactMap { $0[0].integer }
                    for statement in CollectorSchema.startGeneration(generation + 1, at: started, dropping: old) {
                        _ = try await Self.run(statement, on: connection, logger: self.logger)
                    }
                }
                return names
            }
            days.purged(before: time, dropped: dropped)
            for name in dropped { logger.notice("dropped \(name): its records are older than the retention") }
        } catch {
            throw StoreError("cannot drop the records' days older than the retention: \(Self.words(error))")
        }
        // Today's and tomorrow's tables made ahead: the first batches after midnight then wait for
        // no one (making a day waits for the batches in flight, and holds the next ones).
        let now = Date().timeIntervalSince1970
        let ahead = days.missing([now, now + 86_400], now: now)
        if !ahead.isEmpty { try await make(ahead) }
        return deleted
    }

    /// Makes the day tables `missing` (`RecordDays`) that no collector has made yet.
    private func make(_ missing: [Int]) async throws(StoreError) {
        do {
            try await alone(holding: CollectorSchema.partitionLock) { connection in
                let existing = try await Self.rows(CollectorSchema.recordPartitions, on: connection, logger: self.logger)
                self.days.load(existing)
                let names = Set(existing.compactMap { $0[0].text })
                for day in missing where !names.contains(CollectorSchema.dayTable(day)) {
                    for statement in CollectorSchema.makeDay(day) { _ = try await Self.run(statement, on: connection, logger: self.logger) }
                }
            }
            for day in missing { days.made(day) }
        } catch {
            throw StoreError("cannot make the records' table of \(CollectorSchema.dayTable(missing[0])): \(Self.words(error))")
        }
    }

    /// Runs `body` in a transaction holding the advisory lock `key` alone (batches take it
    /// shared), waited for at most `lockWait`: past it, PostgreSQL's "lock timeout".
    private func alone<T>(holding key: Int, _ body: (PostgresConnection) async throws -> sending T) async throws -> sending T {
        try await client.withTransaction(logger: logger) { [logger, lockWait] connection in
            let milliseconds = Int((lockWait / .milliseconds(1)).rounded(.up))
            _ = try await Self.run(CollectorSchema.Statement("SET LOCAL lock_timeout = \(milliseconds)"), on: connection, logger: logger)
            _ = try await Self.run(CollectorSchema.Statement("SELECT pg_advisory_xact_lock(\(key))"), on: connection, logger: logger)
            return try await body(connection)
        }
    }

    public func foldHours(now: Double) async throws(StoreError) -> Int {
        do {
            // One fold at a time across the collectors on this database (two at once could each
            // delete marks the other's older read did not fold), and none beside a batch with late
            // hours (which holds the lock shared). Not waited for for ever: late batches queue
            // behind a waiting fold, so a batch stuck with the lock shared would hold them all;
            // the fold gives up and comes again.
            return try await alone(holding: CollectorSchema.foldLock) { connection in
                try await CollectorSchema.foldHours(now: now) { try await Self.rows($0, on: connection, logger: self.logger) }
            }
        } catch {
            throw StoreError("cannot fold the coverage's hours: \(Self.words(error))")
        }
    }

    public func records(channel: String?, from: Double, to: Double) async throws(StoreError) -> [MeterRecord] {
        do {
            let rows = try await client.query(Self.query(CollectorSchema.records(channel: channel, from: from, to: to)), logger: logger)
            var records: [MeterRecord] = []
            let decoder = JSONDecoder()
            for try await (text) in rows.decode(String.self) { records.append(try decoder.decode(MeterRecord.self, from: Data(text.utf8))) }
            return records
        } catch {
            throw StoreError("cannot read the records: \(Self.words(error))")
        }
    }

    /// What the report reads, on a connection of the client's pool.
    private func read(_ what: String, _ statement: CollectorSchema.Statement) async throws(StoreError) -> [CollectorSchema.Row] {
        do {
            return try await Self.values(client.query(Self.query(statement), logger: logger))
        } catch {
            throw StoreError("cannot read \(what): \(Self.words(error))")
        }
    }

    public func close() async {
        // The channels' last times still waiting (`ChannelSpanWrites`); a failure leaves them a minute behind at most.
        let pending = spans.pending()
        if !pending.isEmpty {
            do {
                try await client.withTransaction(logger: logger) { [logger] connection in
                    try await CollectorSchema.write(pending) { try await Self.rows($0, on: connection, logger: logger) }
                }
            } catch {
                logger.warning("the last times of \(pending.count) channels, a minute at most after their stored ones, are not written: \(Self.words(error))")
            }
        }
        running.cancel()
        _ = await running.value
    }

    /// Runs `statement` on `connection`; the number of rows it returned.
    private static func run(_ statement: CollectorSchema.Statement, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        var count = 0
        for try await _ in try await connection.query(query(statement), logger: logger) { count += 1 }
        return count
    }

    /// Runs `statement` on `connection`; the rows it returned, their values in the order selected.
    private static func rows(_ statement: CollectorSchema.Statement, on connection: PostgresConnection, logger: Logger) async throws -> [CollectorSchema.Row] {
        try await values(connection.query(query(statement), logger: logger))
    }

    private static func values(_ sequence: PostgresRowSequence) async throws -> [CollectorSchema.Row] {
        var rows: [CollectorSchema.Row] = []
        for try await row in sequence {
            // The row's iterator walks its cells in one pass; `map` would find each by its index.
            var values: CollectorSchema.Row = []
            values.reserveCapacity(row.count)
            for cell in row {
                switch cell.dataType {
                case .int2, .int4, .int8: values.append(.integer(try cell.decode(Int?.self)))
                case .float4, .float8, .numeric: values.append(.real(try cell.decode(Double?.self)))
                default: values.append(.text(try cell.decode(String?.self)))
                }
            }
            rows.append(values)
        }
        return rows
    }

    /// The statement with PostgreSQL's numbered placeholders (`$1`...) for its `?`s.
    private static func query(_ statement: CollectorSchema.Statement) -> PostgresQuery {
        // Over the UTF-8 bytes: a batch's statements are thousands of characters and `?`s, and
        // walking them by `Character` was a sixth of the collector's time.
        var sql: [UInt8] = []
        sql.reserveCapacity(statement.sql.utf8.count + statement.binds.count * 4)
        var number = 0
        for byte in statement.sql.utf8 {
            guard byte == UInt8(ascii: "?") else {
                sql.append(byte)
                continue
            }
            number += 1
            sql.append(UInt8(ascii: "$"))
            sql += String(number).utf8
        }
        var binds = PostgresBindings(capacity: statement.binds.count)
        for value in statement.binds {
            switch value {
            case .text(let text?): binds.append(text)
            case .integer(let integer?): binds.append(integer)
            case .real(let real?): binds.append(real)
            case .text(nil), .integer(nil), .real(nil): binds.appendNull()
            case .texts(let column): binds.append(NullableArray(column))
            case .integers(let column): binds.append(NullableArray(column))
            case .reals(let column): binds.append(NullableArray(column))
            }
        }
        return PostgresQuery(unsafeSQL: String(decoding: sql, as: UTF8.self), binds: binds)
    }
}

extension PostgresRecordStore: CoverageReading {
    package func channels() async throws(StoreError) -> [ChannelSpan] {
        try await read("the channels", CollectorSchema.channels).map {
            ChannelSpan(channel: $0[0].text ?? "", firstAt: $0[1].real ?? 0, lastAt: $0[2].real ?? 0, deletedAt: $0[3].real)
        }
    }

    package func coverage(channel: String, minutes: [Range<Int>]) async throws(StoreError) -> [String: [CoverageMinute]] {
        do {
            return try await CollectorSchema.coverage(channel: channel, minutes: minutes) { try await Self.values(client.query(Self.query($0), logger: logger)) }
        } catch {
            throw StoreError("cannot read the coverage of \(channel): \(Self.words(error))")
        }
    }

    package func hours(channel: String, hours: Range<Int>) async throws(StoreError) -> [Int: CoverageHour] {
        try await CollectorSchema.storedHours(read("the hours of \(channel)", CollectorSchema.hours(channel: channel, hours: hours, dialect: .postgres)), channel: channel)
    }

    package func notable(channel: String, from: Double, to: Double) async throws(StoreError) -> [MeterRecord] {
        try StoredRecords.decode(try await read("the records of \(channel)", CollectorSchema.notable(channel: channel, from: from, to: to)).compactMap { $0[0].text },
                                 of: channel)
    }
}
#else
/// Built without the package's `PostgreSQL` trait (as `make run` builds): a `postgres://`
/// database is refused in words where it would have been opened. Its type is SQLite's only so
/// that the places that open a store read the same in both builds; it never returns.
public enum PostgresRecordStore {
    public static func open(url: String, logger: Logger) async throws(StoreError) -> SQLiteRecordStore {
        throw missing
    }

    package static func openForReading(url: String, logger: Logger) async throws(StoreError) -> SQLiteRecordStore {
        throw missing
    }

    private static let missing = StoreError("this id3-meter was built without PostgreSQL (the package's PostgreSQL trait, "
                                            + "which `make build` and `make test` build with): it reads SQLite files only")
}
#endif
