import ID3Meter
import ID3MeterReport

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
            // What the report reads besides coverage: a channel's alerts, events and losses,
            // found without walking its deliveries.
            "CREATE INDEX records_notable ON records (channel, sent_at) WHERE type <> 'send_id3'",
            // Each meter's deliveries of a channel folded by minute (CoverageMinute), as stored:
            // a month's report reads 43,200 rows a channel and meter, not every tag.
            """
            CREATE TABLE coverage (channel TEXT NOT NULL, minute BIGINT NOT NULL, meter TEXT NOT NULL,
                                   creditable INTEGER NOT NULL, info INTEGER NOT NULL, placeholder INTEGER NOT NULL, invalid INTEGER NOT NULL,
                                   first_at DOUBLE PRECISION, last_at DOUBLE PRECISION, hole_from DOUBLE PRECISION, hole_to DOUBLE PRECISION,
                                   info_first DOUBLE PRECISION, info_last DOUBLE PRECISION, PRIMARY KEY (channel, minute, meter))
            """,
            // When each channel was first and last heard of, and deleted from its line-up.
            """
            CREATE TABLE channels (channel TEXT PRIMARY KEY, first_at DOUBLE PRECISION NOT NULL, last_at DOUBLE PRECISION NOT NULL,
                                   deleted_at DOUBLE PRECISION)
            """,
        ], dialect == .postgres ? [holeFunction, coverageRoom] : [], hourTables(dialect), dialect == .postgres ? recordDays : []]
    }

    /// What a database's tables say of it before anything is written to it or read from it:
    /// `nil` when it may be used. A file or database of another application is never written to
    /// (an empty one becomes the collector's); a schema newer than this version's is neither
    /// written nor read; an older one is brought up to date by `collect` alone, never by a report.
    /// `tables` are its table names, `version` its `schema_version` (`nil` without that table).
    static func verdict(tables: [String], version: Int?, writing: Bool, location: String) -> StoreError? {
        let known = migrations(.sqlite).count
        guard tables.contains("schema_version"), let version else {
            if writing && tables.isEmpty { return nil }
            let some = tables.sorted().prefix(5).joined(separator: ", ")
            return StoreError("\(location) is not a collector's database (\(tables.isEmpty ? "it has no tables" : "its tables: \(some)"))"
                + (writing ? ": the collector keeps a database of its own" : ""))
        }
        if version == 0 && tables.count > 1 {
            return StoreError("\(location) has tables but no schema version noted (changed by hand?): it is neither read nor written")
        }
        if version > known {
            return StoreError("\(location) was made by a newer id3-meter (schema version \(version); this one knows up to \(known)): use that version")
        }
        if version < known && !writing {
            return StoreError("\(location) has an older schema (version \(version) of \(known)): run `id3-meter collect` on it once to bring it up to date")
        }
        return nil
    }

    static let versionTable = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
    static let currentVersion = "SELECT COALESCE(MAX(version), 0) AS version FROM schema_version"
    static func noteVersion(_ version: Int) -> Statement { Statement("INSERT INTO schema_version (version) VALUES (?)", [.integer(version)]) }

    /// A value bound to a `?` of a statement, or read from a row.
    enum Value: Sendable {
        case text(String?)
        case integer(Int?)
        case real(Double?)
        /// A whole column, bound as one array (PostgreSQL's `unnest`; `PostgresBatch`).
        case texts([String?])
        case integers([Int?])
        case reals([Double?])

        var text: String? {
            if case .text(let text) = self { text } else { nil }
        }

        var integer: Int? {
            switch self {
            case .integer(let integer): integer
            case .real(let real): real.map { Int($0) }
            case .text, .texts, .integers, .reals: nil
            }
        }

        var real: Double? {
            switch self {
            case .real(let real): real
            case .integer(let integer): integer.map(Double.init)
            case .text, .texts, .integers, .reals: nil
            }
        }
    }

    /// A row's values, in the order its statement selects them.
    typealias Row = [Value]

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

    /// Records a statement inserts on SQLite: a statement a record was most of a big batch's
    /// time, and 500 rows' 4,000 values are well within its limit on them.
    static let insertRows = 500

    /// Inserts records; returns a row for each one kept (a delivery of a pair already kept is not).
    static func insert(_ records: ArraySlice<CollectedRecord>, batch: String) -> Statement {
        let rows = Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?)", count: records.count).joined(separator: ", ")
        return Statement("""
            INSERT INTO records (batch, type, sent_at, channel, meter, tag_id, payload, record) VALUES \(rows)
            ON CONFLICT DO NOTHING RETURNING id
            """, records.flatMap { collected -> [Value] in
                let (record, delivery) = (collected.record, collected.record.delivery)
                return [.text(batch), .text(record.type), .real(record.sentAt), .text(record.channel ?? ""), .text(record.meter ?? ""),
                        .text(delivery?.tagID), .text(delivery?.payload), .text(collected.json)]
            })
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
    static func purgeCoverage(before time: Double) -> [Statement] {
        [Statement("DELETE FROM coverage WHERE minute < ?", [.integer(CoverageMinute.minute(of: time))])] + purgeHours(before: time)
    }

    /// Keeps `batch` through `run` (a statement in, the rows it returned out), inside a
    /// transaction the caller opened and commits, in `dialect`; the channel spans it wrote, for
    /// the caller to tell `spans` once the transaction is committed.
    static func store(_ batch: CollectedBatch, dialect: Dialect, spans: ChannelSpanWrites,
                      run: (Statement) async throws -> [Row]) async throws -> (receipt: StoreReceipt, spans: [ChannelSpanWrites.Span]) {
        let late = lateHours(batch)
        // Before any row is taken: a fold or a change of partitions waiting for its lock must
        // not wait on rows too; and before the generation of the pair keys is read.
        if dialect == .postgres { _ = try await run(batchLock) }
        if dialect == .postgres, !late.isEmpty { _ = try await run(lateBatchLock) }
        guard try await run(claim(batch)).count == 1 else {
            return (StoreReceipt(alreadyHad: true, records: batch.records.count, kept: 0), [])
        }
        let records = inKeyOrder(batch.records)
        var kept = 0
        switch dialect {
        case .postgres:
            kept = try await run(insertColumns(records, batch: batch.id)).first?.first?.integer ?? 0
        case .sqlite:
            for start in stride(from: 0, to: records.count, by: insertRows) {
                kept += try await run(insert(records[start..<min(start + insertRows, records.count)], batch: batch.id)).count
            }
            _ = try await run(Self.kept(kept, batch: batch.id))
        }
        let written = try await fold(batch, dialect: dialect, spans: spans, run: run)
        // Hours a fold has taken already: marked, so that the report folds them anew.
        for statement in marks(late, dialect: dialect) { _ = try await run(statement) }
        return (StoreReceipt(alreadyHad: false, records: batch.records.count, kept: kept), written)
    }

    /// The batch's records with its deliveries in the order of their unique key (channel, tag),
    /// in the places deliveries hold, the other records where they are: every transaction then
    /// inserts a pair's shared tags in one order, and two of them wait for each other rather
    /// than each for the other (PostgreSQL's deadlock, 40P01, when a redundant pair's batches
    /// over the same channels were stored at once).
    static func inKeyOrder(_ records: [CollectedRecord]) -> [CollectedRecord] {
        let places = records.indices.filter { records[$0].record.delivery != nil }
        let sorted = places.map { records[$0] }.sorted {
            ($0.record.channel ?? "", $0.record.delivery?.tagID ?? "") < ($1.record.channel ?? "", $1.record.delivery?.tagID ?? "")
        }
        var ordered = records
        for (place, record) in zip(places, sorted) { ordered[place] = record }
        return ordered
    }

    /// Folds the batch's deliveries into its meters' coverage minutes (every copy, a delivery of
    /// a pair already kept too: it tells which meter saw what), and its times into its channels'.
    private static func fold(_ batch: CollectedBatch, dialect: Dialect, spans: ChannelSpanWrites,
                             run: (Statement) async throws -> [Row]) async throws -> [ChannelSpanWrites.Span] {
        struct Key: Hashable { var channel: String, minute: Int, meter: String }
        var tags: [Key: [(TagCredit, Double)]] = [:]
        var heard: [String: (first: Double?, last: Double?, deleted: Double?)] = [:]
        for collected in batch.records {
            let record = collected.record
            let channel = record.channel ?? ""
            if let delivery = record.delivery {
                tags[Key(channel: channel, minute: CoverageMinute.minute(of: record.sentAt), meter: record.meter ?? ""), default: []]
                    .append((TagCredit(payload: delivery.payload), record.sentAt))
            }
            var known = heard[channel] ?? (nil, nil, nil)
            if case .custom(let custom) = record.content, custom.type == "config_change", custom.fields["action"] == "delete" {
                known.deleted = max(known.deleted ?? record.sentAt, record.sentAt)
            } else {
                (known.first, known.last) = (min(known.first ?? record.sentAt, record.sentAt), max(known.last ?? record.sentAt, record.sentAt))
            }
            heard[channel] = known
        }
        // Rows are taken in one order, the same in every transaction: two batches over the same
        // channels at once (a redundant pair's, posted together) then wait for each other, and
        // never each for the other (PostgreSQL's deadlock, 40P01).
        let keys = tags.keys.sorted { ($0.channel, $0.minute, $0.meter) < ($1.channel, $1.minute, $1.meter) }
        switch dialect {
        case .postgres:
            // The batch's own minutes, added to the stored ones by the upsert.
            _ = try await run(foldColumns(keys.map { key in
                var minute = CoverageMinute(minute: key.minute)
                for (credit, time) in tags[key] ?? [] { minute.add(credit, at: time) }
                return (key.channel, key.meter, minute)
            }))
        case .sqlite:
            // A minute is read, added to and written back (SQLite stores one batch at a time), a
            // few statements over many minutes: a statement a minute was most of a batch's time.
            for chunk in stride(from: 0, to: keys.count, by: foldRows).map({ keys[$0..<min($0 + foldRows, keys.count)] }) {
                let keyValues = chunk.flatMap { [Value.text($0.channel), .integer($0.minute), .text($0.meter)] }
                let found = try await run(Statement("""
                    WITH k (channel, minute, meter) AS (VALUES \(Array(repeating: "(?, ?, ?)", count: chunk.count).joined(separator: ", ")))
                    SELECT c.creditable, c.info, c.placeholder, c.invalid, c.first_at, c.last_at, c.hole_from, c.hole_to, c.info_first,
                           c.info_last, c.channel, c.minute, c.meter
                    FROM k JOIN coverage c ON c.channel = k.channel AND c.minute = k.minute AND c.meter = k.meter
                    """, keyValues))
                var stored: [Key: Row] = [:]
                for row in found { stored[Key(channel: row[10].text ?? "", minute: row[11].integer ?? 0, meter: row[12].text ?? "")] = row }
                var values: [Value] = []
                for key in chunk {
                    var minute = stored[key].map { coverageMinute(key.minute, $0) } ?? CoverageMinute(minute: key.minute)
                    for (credit, time) in tags[key] ?? [] { minute.add(credit, at: time) }
                    values += [.text(key.channel), .integer(key.minute), .text(key.meter), .integer(minute.creditable), .integer(minute.info),
                               .integer(minute.placeholder), .integer(minute.invalid), .real(minute.first), .real(minute.last),
                               .real(minute.hole?.lowerBound), .real(minute.hole?.upperBound), .real(minute.infoFirst), .real(minute.infoLast)]
                }
                _ = try await run(Statement("""
                    INSERT INTO coverage (channel, minute, meter, creditable, info, placeholder, invalid, first_at, last_at, hole_from, hole_to,
                                          info_first, info_last) VALUES \(Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: chunk.count).joined(separator: ", "))
                    ON CONFLICT (channel, minute, meter) DO UPDATE SET creditable = excluded.creditable, info = excluded.info,
                        placeholder = excluded.placeholder, invalid = excluded.invalid, first_at = excluded.first_at, last_at = excluded.last_at,
                        hole_from = excluded.hole_from, hole_to = excluded.hole_to, info_first = excluded.info_first, info_last = excluded.info_last
                    """, values))
            }
        }
        let heardOf = heard.compactMap { channel, times in
            (times.first ?? times.deleted).map { ChannelSpanWrites.Span(channel: channel, first: $0, last: times.last ?? $0, deleted: times.deleted) }
        }
        let written = spans.toWrite(heardOf).sorted { $0.channel < $1.channel }
        try await write(written, run: run)
        return written
    }

    /// Folds `spans` into their channels' rows, in channel order.
    static func write(_ spans: [ChannelSpanWrites.Span], run: (Statement) async throws -> [Row]) async throws {
        for chunk in stride(from: 0, to: spans.count, by: foldRows).map({ spans[$0..<min($0 + foldRows, spans.count)] }) {
            let rows = Array(repeating: "(?, ?, ?, ?)", count: chunk.count).joined(separator: ", ")
            _ = try await run(Statement(heardOf(rows: rows), chunk.flatMap { span in
                [Value.text(span.channel), .real(span.first), .real(span.last), .real(span.deleted)]
            }))
        }
    }

    /// Minutes (or channels) one statement of the fold reads or writes: 13 values each, well
    /// within either database's limit on a statement's values.
    static let foldRows = 500

    /// Channels heard of from `first_at` to `last_at`, deleted at `deleted_at` (`rows`, their
    /// VALUES tuples), each folded into its row in one statement (ChannelSpan's rule: a deletion
    /// stands when nothing was heard after it): two collectors storing batches of one channel at
    /// once cannot undo each other.
    private static func heardOf(rows: String) -> String {
        func greater(_ a: String, _ b: String) -> String { "CASE WHEN \(a) > \(b) THEN \(a) ELSE \(b) END" }
        let last = greater("excluded.last_at", "channels.last_at")
        let deleted = """
            CASE WHEN excluded.deleted_at IS NULL THEN channels.deleted_at WHEN channels.deleted_at IS NULL THEN excluded.deleted_at \
            ELSE \(greater("excluded.deleted_at", "channels.deleted_at")) END
            """
        return """
            INSERT INTO channels (channel, first_at, last_at, deleted_at) VALUES \(rows)
            ON CONFLICT (channel) DO UPDATE SET first_at = CASE WHEN excluded.first_at < channels.first_at THEN excluded.first_at ELSE channels.first_at END,
                last_at = \(last), deleted_at = CASE WHEN (\(deleted)) >= (\(last)) THEN (\(deleted)) ELSE NULL END
            """
    }

    static func coverageMinute(_ minute: Int, _ row: Row) -> CoverageMinute {
        let hole = row[6].real.flatMap { from in row[7].real.map { from...max(from, $0) } }
        return CoverageMinute(minute: minute, creditable: row[0].integer ?? 0, info: row[1].integer ?? 0, placeholder: row[2].integer ?? 0,
                              invalid: row[3].integer ?? 0, first: row[4].real, last: row[5].real, hole: hole, infoFirst: row[8].real,
                              infoLast: row[9].real)
    }

    // What the report reads (CoverageReading).
    static let channels = Statement("SELECT channel, first_at, last_at, deleted_at FROM channels ORDER BY channel")

    /// The channel's minutes in `ranges` (at most `foldRows` of them), found through the key
    /// range by range.
    static func coverage(channel: String, minutes ranges: some Collection<Range<Int>>) -> Statement {
        Statement("""
            WITH r (low, high) AS (VALUES \(Array(repeating: "(CAST(? AS BIGINT), CAST(? AS BIGINT))", count: ranges.count).joined(separator: ", ")))
            SELECT c.creditable, c.info, c.placeholder, c.invalid, c.first_at, c.last_at, c.hole_from, c.hole_to, c.info_first, c.info_last,
                   c.minute, c.meter
            FROM r JOIN coverage c ON c.channel = ? AND c.minute >= r.low AND c.minute < r.high ORDER BY c.minute, c.meter
            """, ranges.flatMap { [Value.integer($0.lowerBound), .integer($0.upperBound)] } + [.text(channel)])
    }

    /// The channel's minutes in `ranges`, by meter, sorted: a statement each `foldRows` ranges.
    static func coverage(channel: String, minutes ranges: [Range<Int>], rows: (Statement) async throws -> [Row]) async throws -> [String: [CoverageMinute]] {
        var byMeter: [String: [CoverageMinute]] = [:]
        for start in stride(from: 0, to: ranges.count, by: foldRows) {
            for row in try await rows(coverage(channel: channel, minutes: ranges[start..<min(start + foldRows, ranges.count)])) {
                byMeter[row[11].text ?? "", default: []].append(coverageMinute(row[10].integer ?? 0, row))
            }
        }
        return byMeter.mapValues { $0.sorted { $0.minute < $1.minute } }
    }

    static func notable(channel: String, from: Double, to: Double) -> Statement {
        Statement("""
            SELECT record FROM records WHERE channel = ? AND type <> 'send_id3' AND sent_at >= ? AND sent_at < ? ORDER BY sent_at, id
            """, [.text(channel), .real(from), .real(to)])
    }
}
