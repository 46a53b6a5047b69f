import Foundation
import ID3Meter
import ID3MeterReport
import Logging
import SQLiteNIO
import Synchronization

/// The records in an SQLite file: nothing to install, one writer. Each batch is one
/// transaction, committed to the write-ahead log with `synchronous = FULL` before the answer, so
/// that a crash or a power cut loses nothing the collector answered 2xx for.
public actor SQLiteRecordStore: RecordStore {
    private let connection: SQLiteConnection
    /// One transaction at a time on the one connection: the actor alone would let a second
    /// batch begin while the first waits on the disk.
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private let spans = ChannelSpanWrites()
    private let logger: Logger

    private init(connection: SQLiteConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Opens (or creates) the database at `path` and brings its schema up to date; a file of
    /// another application, or of a newer version, is refused untouched.
    public static func open(path: String, logger: Logger) async throws(StoreError) -> SQLiteRecordStore {
        let store = try await connect(path, storage: .file(path: path), logger: logger)
        do {
            try await store.prepare(path: path)
        } catch {
            await store.close()
            throw error
        }
        return store
    }

    /// Opens the database at `path` to read it (a report): nothing is written, not even a
    /// journal setting; one that is not the collector's, at this version's schema, is refused.
    package static func openForReading(path: String, logger: Logger) async throws(StoreError) -> SQLiteRecordStore {
        // Reading never makes a database: a mistyped path is an error, not an empty report.
        guard FileManager.default.fileExists(atPath: path) else { throw StoreError("\(path) does not exist") }
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        let escaped = absolute.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "?#%"))) ?? absolute
        let store = try await connect(path, storage: .file(path: "file:\(escaped)?mode=ro"), logger: logger)
        do {
            if let refusal = try await store.verdict(path: path, writing: false) { throw refusal }
        } catch {
            await store.close()
            throw error as? StoreError ?? StoreError("cannot read the database \(path): \(error)")
        }
        return store
    }

    private static func connect(_ path: String, storage: SQLiteConnection.Storage, logger: Logger) async throws(StoreError) -> SQLiteRecordStore {
        do {
            return SQLiteRecordStore(connection: try await SQLiteConnection.open(storage: storage, logger: logger), logger: logger)
        } catch {
            throw StoreError("cannot open the database \(path): \(error)")
        }
    }

    /// Why the database may not be used (`CollectorSchema.verdict`), or `nil`.
    private func verdict(path: String, writing: Bool) async throws -> StoreError? {
        let tables = try await rows(CollectorSchema.Statement("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"))
            .compactMap { $0.first?.text }
        let version = tables.contains("schema_version") ? try await rows(CollectorSchema.Statement(CollectorSchema.currentVersion)).first?.first?.integer : nil
        return CollectorSchema.verdict(tables: tables, version: version, writing: writing, location: path)
    }

    private func prepare(path: String) async throws(StoreError) {
        do {
            if let refusal = try await verdict(path: path, writing: true) { throw refusal }
            for pragma in ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL", "PRAGMA busy_timeout = 5000"] {
                _ = try await run(CollectorSchema.Statement(pragma))
            }
            _ = try await run(CollectorSchema.Statement(CollectorSchema.versionTable))
            let version = try await rows(CollectorSchema.Statement(CollectorSchema.currentVersion)).first?.first?.integer ?? 0
            for (index, statements) in CollectorSchema.migrations(.sqlite).enumerated() where index + 1 > version {
                _ = try await transaction {
                    for statement in statements { _ = try await self.run(CollectorSchema.Statement(statement)) }
                    _ = try await self.run(CollectorSchema.noteVersion(index + 1))
                }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError("cannot prepare the database \(path): \(error)")
        }
    }

    public func store(_ batch: CollectedBatch) async throws(StoreError) -> StoreReceipt {
        do {
            let stored = try await transaction { try await CollectorSchema.store(batch, dialect: .sqlite, spans: self.spans, run: self.rows) }
            spans.wrote(stored.spans)
            return stored.receipt
        } catch {
            throw StoreError("cannot store batch \(batch.id): \((error as? SQLiteError)?.message ?? "\(error)")")
        }
    }

    public func purge(before time: Double) async throws(StoreError) -> Int {
        do {
            return try await transaction {
                _ = try await self.run(CollectorSchema.purgeBatches(before: time))
                for statement in CollectorSchema.purgeCoverage(before: time) { _ = try await self.run(statement) }
                return try await self.run(CollectorSchema.purgeRecords(before: time))
            }
        } catch {
            throw StoreError("cannot delete records older than the retention: \(error)")
        }
    }

    public func foldHours(now: Double) async throws(StoreError) -> Int {
        do {
            return try await transaction { try await CollectorSchema.foldHours(now: now, run: self.rows) }
        } catch {
            throw StoreError("cannot fold the coverage's hours: \((error as? SQLiteError)?.message ?? "\(error)")")
        }
    }

    public func records(channel: String?, from: Double, to: Double) async throws(StoreError) -> [MeterRecord] {
        do {
            let rows = try await query(CollectorSchema.records(channel: channel, from: from, to: to))
            let decoder = JSONDecoder()
            return try rows.compactMap { $0.column("record")?.string }.map { try decoder.decode(MeterRecord.self, from: Data($0.utf8)) }
        } catch {
            throw StoreError("cannot read the records: \(error)")
        }
    }

    public func close() async {
        // The channels' last times still waiting (`ChannelSpanWrites`); a failure leaves them a minute behind at most.
        let pending = spans.pending()
        if !pending.isEmpty {
            do { try await transaction { try await CollectorSchema.write(pending, run: self.rows) } } catch {
                logger.warning("the last times of \(pending.count) channels, a minute at most after their stored ones, are not written: \(error)")
            }
        }
        // The future's form: the async one gives up in a cancelled task (a collector whose
        // listener could not open is cancelled whole), leaving the file open.
        try? await connection.close().get()
    }

    /// What the report reads, outside any batch's transaction: SQLite's write-ahead log lets it
    /// read while the collector writes.
    private func read<T>(_ what: String, _ work: () async throws -> T) async throws(StoreError) -> T {
        do { return try await work() } catch { throw StoreError("cannot read \(what): \(error)") }
    }

    /// `work` between `BEGIN IMMEDIATE` and `COMMIT`, rolled back when it throws; one at a time.
    private func transaction<T: Sendable>(_ work: () async throws -> T) async throws -> T {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            busy = true
        }
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        _ = try await run(CollectorSchema.Statement("BEGIN IMMEDIATE"))
        do {
            let result = try await work()
            _ = try await run(CollectorSchema.Statement("COMMIT"))
            return result
        } catch {
            _ = try? await run(CollectorSchema.Statement("ROLLBACK"))
            throw error
        }
    }

    /// Runs `statement`; the number of rows it returned.
    private func run(_ statement: CollectorSchema.Statement) async throws -> Int {
        try await query(statement).count
    }

    /// Runs `statement`; the rows it returned, their values in the order selected.
    private func rows(_ statement: CollectorSchema.Statement) async throws -> [CollectorSchema.Row] {
        try await query(statement).map { row in
            row.columns.map { column -> CollectorSchema.Value in
                switch column.data {
                case .integer(let integer): .integer(integer)
                case .float(let real): .real(real)
                case .text(let text): .text(text)
                case .blob, .null: .text(nil)
                }
            }
        }
    }

    private func query(_ statement: CollectorSchema.Statement) async throws -> [SQLiteRow] {
        let binds = try statement.binds.map { value throws -> SQLiteData in
            switch value {
            case .text(let text): text.map(SQLiteData.text) ?? .null
            case .integer(let integer): integer.map(SQLiteData.integer) ?? .null
            case .real(let real): real.map(SQLiteData.float) ?? .null
            case .texts, .integers, .reals: throw StoreError("a column of values is bound on PostgreSQL only")
            }
        }
        let rows = Rows()
        try await connection.query(statement.sql, binds, rows.add)
        return rows.all
    }
}

extension SQLiteRecordStore: CoverageReading {
    package func channels() async throws(StoreError) -> [ChannelSpan] {
        try await read("the channels") {
            try await rows(CollectorSchema.channels).map {
                ChannelSpan(channel: $0[0].text ?? "", firstAt: $0[1].real ?? 0, lastAt: $0[2].real ?? 0, deletedAt: $0[3].real)
            }
        }
    }

    package func coverage(channel: String, minutes: [Range<Int>]) async throws(StoreError) -> [String: [CoverageMinute]] {
        try await read("the coverage of \(channel)") { try await CollectorSchema.coverage(channel: channel, minutes: minutes, rows: rows) }
    }

    package func hours(channel: String, hours: Range<Int>) async throws(StoreError) -> [Int: CoverageHour] {
        try CollectorSchema.storedHours(try await read("the hours of \(channel)") { try await rows(CollectorSchema.hours(channel: channel, hours: hours, dialect: .sqlite)) },
                                        channel: channel)
    }

    package func notable(channel: String, from: Double, to: Double) async throws(StoreError) -> [MeterRecord] {
        try StoredRecords.decode(try await read("the records of \(channel)") {
            try await rows(CollectorSchema.notable(channel: channel, from: from, to: to)).compactMap { $0[0].text }
        }, of: channel)
    }
}

/// Rows as sqlite-nio hands them over, on its thread.
private final class Rows: Sendable {
    private let rows = Mutex<[SQLiteRow]>([])
    @Sendable func add(_ row: SQLiteRow) { rows.withLock { $0.append(row) } }
    var all: [SQLiteRow] { rows.withLock { $0 } }
}
