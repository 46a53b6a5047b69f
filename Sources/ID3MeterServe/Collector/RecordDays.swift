import ID3MeterReport
import Synchronization

/// PostgreSQL keeps records in a table a day (UTC) and the pair key in generations, so that
/// retention drops tables instead of deleting a fleet's hundreds of millions of rows a day
/// (docs/COLLECTOR.md, "Days and generations"). SQLite keeps one table and its unique index.
///
/// - `records` is partitioned by `sent_at`: `records_YYYYMMDD` for the days around now (made
///   when a batch first brings one), `records_outside` (the default partition) for the rest (a
///   meter's clock far off, a record older than the retention), and `records_legacy` for what
///   a database held before this version. A day made later takes its rows out of
///   `records_outside`. `record_partitions` names each partition and the time it ends before.
/// - A unique index on a partitioned table must hold the partition key, and a pair's two copies
///   of a tag carry each meter's own `sent_at`: so the pair key is not on `records` but in
///   `delivery_keys(channel, tag_id, generation)`, partitioned by generation. A batch inserts its
///   keys into the newest generation (the unique index decides between batches at once), and
///   only those not found in an older one. A new generation starts once the newest has run for
///   the retention; the ones before the last are then dropped, their every key older than the
///   retention. An older generation takes no key after a newer one starts: a batch holds
///   `partitionLock` shared for its transaction, and the switch takes it alone.
extension CollectorSchema {
    /// The advisory lock batches hold shared (PostgreSQL) and changes to the partitions alone.
    static let partitionLock = 0x6964_3364_6179_73

    /// A batch's first statement on PostgreSQL, before it takes any row or reads a generation.
    static let batchLock = sharedLock(partitionLock)

    /// The advisory lock `key` taken shared for the transaction.
    static func sharedLock(_ key: Int) -> Statement { Statement("SELECT pg_advisory_xact_lock_shared(\(key))") }

    /// Schema version 4 on PostgreSQL: the records table partitioned, the one before it kept as
    /// a partition of what it held (dropped when empty), its pair keys the first generation.
    static let recordDays = [
        "ALTER TABLE records RENAME TO records_legacy",
        "ALTER INDEX records_pkey RENAME TO records_legacy_pkey",
        "ALTER INDEX records_once RENAME TO records_legacy_once",
        "ALTER INDEX records_channel_time RENAME TO records_legacy_channel_time",
        "ALTER INDEX records_time RENAME TO records_legacy_time",
        "ALTER INDEX records_notable RENAME TO records_legacy_notable",
        """
        CREATE TABLE records (id BIGINT NOT NULL DEFAULT nextval('records_id_seq'), batch TEXT NOT NULL, type TEXT NOT NULL,
                              sent_at DOUBLE PRECISION NOT NULL, channel TEXT NOT NULL, meter TEXT NOT NULL, tag_id TEXT, payload TEXT,
                              record TEXT NOT NULL) PARTITION BY RANGE (sent_at)
        """,
        "ALTER TABLE records_legacy ALTER COLUMN id DROP DEFAULT",
        "ALTER SEQUENCE records_id_seq OWNED BY records.id",
        "CREATE INDEX records_channel_time ON records (channel, sent_at)",
        "CREATE INDEX records_time ON records (sent_at)",
        "CREATE INDEX records_notable ON records (channel, sent_at) WHERE type <> 'send_id3'",
        "CREATE TABLE records_outside PARTITION OF records DEFAULT",
        "CREATE TABLE record_partitions (name TEXT PRIMARY KEY, before DOUBLE PRECISION NOT NULL)",
        "CREATE TABLE key_generations (generation INTEGER PRIMARY KEY, started_at DOUBLE PRECISION NOT NULL)",
        "INSERT INTO key_generations VALUES (1, extract(epoch FROM now()))",
        "CREATE TABLE delivery_keys (channel TEXT NOT NULL, tag_id TEXT NOT NULL, generation INTEGER NOT NULL) PARTITION BY LIST (generation)",
        "CREATE UNIQUE INDEX delivery_keys_once ON delivery_keys (channel, tag_id, generation)",
        "CREATE TABLE delivery_keys_1 PARTITION OF delivery_keys FOR VALUES IN (1)",
        "INSERT INTO delivery_keys SELECT DISTINCT channel, tag_id, 1 FROM records_legacy WHERE type = 'send_id3' AND tag_id IS NOT NULL",
        // The old rows stay where they are, up to the end of the day after the last of them (or now).
        """
        DO $$
        DECLARE bound float8;
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM records_legacy) THEN
                DROP TABLE records_legacy;
            ELSE
                SELECT (floor(GREATEST(max(sent_at), extract(epoch FROM now())) / 86400) + 1) * 86400 INTO bound FROM records_legacy;
                EXECUTE format('ALTER TABLE records ATTACH PARTITION records_legacy FOR VALUES FROM (MINVALUE) TO (%s)', bound);
                INSERT INTO record_partitions VALUES ('records_legacy', bound);
            END IF;
        END $$
        """,
    ]

    /// The partitions' names and ends, as `RecordDays` starts from.
    static let recordPartitions = Statement("SELECT name, before FROM record_partitions")

    /// Makes day `day`'s table (days since 1970-01-01, UTC) unless some collector has: its rows
    /// taken out of `records_outside`. In a transaction holding `partitionLock` alone.
    static func makeDay(_ day: Int) -> [Statement] {
        let name = dayTable(day)
        let (from, before) = (Double(day) * 86_400, Double(day + 1) * 86_400)
        return [
            Statement("CREATE TABLE \(name) (LIKE records)"),
            Statement("""
                WITH moved AS (DELETE FROM records_outside WHERE sent_at >= ? AND sent_at < ?
                               RETURNING id, batch, type, sent_at, channel, meter, tag_id, payload, record)
                INSERT INTO \(name) SELECT * FROM moved
                """, [.real(from), .real(before)]),
            Statement("ALTER TABLE records ATTACH PARTITION \(name) FOR VALUES FROM (\(Int(from))) TO (\(Int(before)))"),
            Statement("INSERT INTO record_partitions VALUES (?, ?)", [.text(name), .real(before)]),
        ]
    }

    /// `records_20261120`.
    static func dayTable(_ day: Int) -> String {
        let date = ReportCalendar.civil(fromDays: day)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return "records_\(date.year)\(two(date.month))\(two(date.day))"
    }

    /// The rows older than `time` outside the day tables (which go whole, `dropPartition`):
    /// `records_outside`'s, and the legacy table's, which holds every time before its end.
    static func purgeOutside(before time: Double) -> [Statement] {
        [Statement("DELETE FROM records_outside WHERE sent_at < ? RETURNING id", [.real(time)]),
         Statement("""
            DELETE FROM records WHERE sent_at < LEAST(?, COALESCE((SELECT before FROM record_partitions WHERE name = 'records_legacy'),
                                                                  '-Infinity')) RETURNING id
            """, [.real(time)])]
    }

    /// The partitions wholly older than `time`: names to drop.
    static func partitions(before time: Double) -> Statement {
        Statement("SELECT name FROM record_partitions WHERE before <= ? ORDER BY before", [.real(time)])
    }

    static func dropPartition(_ name: String) -> [Statement] {
        [Statement("DROP TABLE \(name)"), Statement("DELETE FROM record_partitions WHERE name = ?", [.text(name)])]
    }

    static let newestGeneration = Statement("SELECT generation, started_at FROM key_generations ORDER BY generation DESC LIMIT 1")

    /// Starts generation `next` at `now`, dropping those before `next - 1`.
    static func startGeneration(_ next: Int, at now: Double, dropping old: [Int]) -> [Statement] {
        [Statement("INSERT INTO key_generations VALUES (?, ?)", [.integer(next), .real(now)]),
         Statement("CREATE TABLE delivery_keys_\(next) PARTITION OF delivery_keys FOR VALUES IN (\(next))")]
            + old.map { Statement("DROP TABLE delivery_keys_\($0)") }
            + [Statement("DELETE FROM key_generations WHERE generation < ?", [.integer(next - 1)])]
    }

    static func generations(before generation: Int) -> Statement {
        Statement("SELECT generation FROM key_generations WHERE generation < ?", [.integer(generation)])
    }
}

/// What a PostgreSQL store knows of its database's partitions (`CollectorSchema.recordDays`):
/// the days made, the legacy table's end, the retention's last cutoff. Another collector may
/// have made or dropped one since: a day thought missing is looked up again under the lock, a
/// day dropped elsewhere sends its rows to `records_outside`, where the retention finds them.
final class RecordDays: Sendable {
    private struct State {
        var days: Set<Int> = []
        var legacyBefore: Double?
        var cutoff: Double?
    }

    private let state = Mutex(State())

    /// The UTC day of `time`, held to the times a record may have (1970 to 2100, as
    /// `CoverageMinute`): a library's batch or an old database's row may hold any number.
    static func day(of time: Double) -> Int {
        Int((min(max(time.isNaN ? 0 : time, CoverageMinute.times.lowerBound), CoverageMinute.times.upperBound) / 86_400).rounded(.down))
    }

    /// Takes what `CollectorSchema.recordPartitions` returned.
    func load(_ rows: [CollectorSchema.Row]) {
        state.withLock { state in
            state.days = []
            state.legacyBefore = nil
            for row in rows {
                guard let name = row[0].text, let before = row[1].real else { continue }
                if name == "records_legacy" { state.legacyBefore = before } else { state.days.insert(Self.day(of: before) - 1) }
            }
        }
    }

    /// The days of `times` that should have a table and are not known to: from the retention's
    /// cutoff (the day before `now` until it is known) to the day after `now`, after the legacy
    /// table's end. A meter's clock far off, or a spool older than that, goes to `records_outside`
    /// instead of making a table a day.
    func missing(_ times: some Sequence<Double>, now: Double) -> [Int] {
        state.withLock { state in
            let first = max(state.cutoff.map(Self.day(of:)) ?? Self.day(of: now) - 1,
                            state.legacyBefore.map { Self.day(of: $0 - 1) + 1 } ?? .min)
            let last = Self.day(of: now) + 1
            guard first <= last else { return [] }
            var missing = Set<Int>()
            for time in times where CoverageMinute.times.contains(time) {
                let day = Self.day(of: time)
                if day >= first && day <= last && !state.days.contains(day) { missing.insert(day) }
            }
            return missing.sorted()
        }
    }

    func made(_ day: Int) { _ = state.withLock { $0.days.insert(day) } }

    func purged(before cutoff: Double, dropped: [String]) {
        state.withLock { state in
            state.cutoff = cutoff
            if dropped.contains("records_legacy") { state.legacyBefore = nil }
            state.days = state.days.filter { Double($0 + 1) * 86_400 > cutoff }
        }
    }

}
