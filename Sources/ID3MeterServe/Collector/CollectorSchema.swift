import ID3Meter

/// The collector's tables, one schema for SQLite and PostgreSQL, and the statements that keep a
/// batch. A version of the schema is applied once, in order, and noted in `schema_version`.
enum CollectorSchema {
    enum Dialect {
        case sqlite, postgres

        var rowID: String {
            switch self {
            case .sqlite: "INTEGER PRIMARY KEY AUTOINCREMENT"
            case .postgres: "BIGSERIAL PRIMARY KEY"
            }
        }
    }

    /// Each version's statements; a new version is a new element, never an edit of an old one.
    static func migrations(_ dialect: Dialect) -> [[String]] {
        [[
            """
            CREATE TABLE batches (id TEXT PRIMARY KEY, meter TEXT NOT NULL, meter_version TEXT NOT NULL, posted_by TEXT NOT NULL,
                                  received_at DOUBLE PRECISION NOT NULL, records INTEGER NOT NULL, kept INTEGER NOT NULL)
            """,
            """
            CREATE TABLE records (id \(dialect.rowID), batch TEXT NOT NULL, type TEXT NOT NULL, sent_at DOUBLE PRECISION NOT NULL,
                                  channel TEXT NOT NULL, meter TEXT NOT NULL, tag_id TEXT, payload TEXT, record TEXT NOT NULL)
            """,
            // One delivery per (channel, tag_id) across meters: the contract's second key.
            "CREATE UNIQUE INDEX records_once ON records (channel, tag_id) WHERE type = 'send_id3'",
            // A channel's day, the report's question.
            "CREATE INDEX records_channel_time ON records (channel, sent_at)",
            "CREATE INDEX records_time ON records (sent_at)",
            "CREATE INDEX batches_received ON batches (received_at)",
        ]]
    }

    static let versionTable = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
    static let currentVersion = "SELECT COALESCE(MAX(version), 0) AS version FROM schema_version"
    static func noteVersion(_ version: Int) -> Statement { Statement("INSERT INTO schema_version (version) VALUES (?)", [.integer(version)]) }

    /// A value bound to a `?` of a statement.
    enum Value: Sendable {
        case text(String?)
        case integer(Int?)
        case real(Double?)
    }

    struct Statement: Sendable {
        var sql: String
        var binds: [Value]

        init(_ sql: String, _ binds: [Value] = []) {
            self.sql = sql
            self.binds = binds
        }
    }

    /// Inserts the batch's id; returns a row when it is new.
    static func claim(_ batch: CollectedBatch) -> Statement {
        Statement("""
            INSERT INTO batches (id, meter, meter_version, posted_by, received_at, records, kept) VALUES (?, ?, ?, ?, ?, ?, 0)
            ON CONFLICT (id) DO NOTHING RETURNING id
            """, [.text(batch.id), .text(batch.records.lazy.compactMap(\.record.meter).first ?? ""), .text(batch.meterVersion),
                  .text(batch.postedBy), .real(batch.receivedAt), .integer(batch.records.count)])
    }

    /// Inserts a record; returns a row when it was kept (a delivery of a pair already kept is not).
    static func insert(_ collected: CollectedRecord, batch: String) -> Statement {
        let (record, delivery) = (collected.record, collected.record.delivery)
        return Statement("""
            INSERT INTO records (batch, type, sent_at, channel, meter, tag_id, payload, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO NOTHING RETURNING id
            """, [.text(batch), .text(record.type), .real(record.sentAt), .text(record.channel ?? ""), .text(record.meter ?? ""),
                  .text(delivery?.tagID), .text(delivery?.payload), .text(collected.json)])
    }

    static func kept(_ count: Int, batch: String) -> Statement {
        Statement("UPDATE batches SET kept = ? WHERE id = ?", [.integer(count), .text(batch)])
    }

    static func records(channel: String?, from: Double, to: Double) -> Statement {
        guard let channel else {
            return Statement("SELECT record FROM records WHERE sent_at >= ? AND sent_at < ? ORDER BY sent_at, id", [.real(from), .real(to)])
        }
        return Statement("SELECT record FROM records WHERE channel = ? AND sent_at >= ? AND sent_at < ? ORDER BY sent_at, id",
                         [.text(channel), .real(from), .real(to)])
    }

    static func purgeRecords(before time: Double) -> Statement { Statement("DELETE FROM records WHERE sent_at < ? RETURNING id", [.real(time)]) }
    static func purgeBatches(before time: Double) -> Statement { Statement("DELETE FROM batches WHERE received_at < ?", [.real(time)]) }

    /// Keeps `batch` through `run` (a statement in, the number of rows it returned out), inside a
    /// transaction the caller opened and commits.
    static func store(_ batch: CollectedBatch, run: (Statement) async throws -> Int) async throws -> StoreReceipt {
        guard try await run(claim(batch)) == 1 else {
            return StoreReceipt(alreadyHad: true, records: batch.records.count, kept: 0)
        }
        var kept = 0
        for record in batch.records { kept += try await run(insert(record, batch: batch.id)) }
        _ = try await run(Self.kept(kept, batch: batch.id))
        return StoreReceipt(alreadyHad: false, records: batch.records.count, kept: kept)
    }
}
