import ID3Meter
import ID3MeterReport

/// The collector's hours (`CoverageHour`, schema version 3): each channel's minutes folded once
/// an hour is over, so that a month's report reads an hour where it would read sixty minutes a
/// meter. docs/COLLECTOR.md says why a stored hour is never stale:
/// - an hour is folded only `foldAfter` after it ended; a batch stored later that touches an
///   hour ended `markAfter` before it was received, and already folded, leaves a mark on it
///   (`coverage_marks`, rows only added, so batches never wait on each other for them). On
///   PostgreSQL such a batch holds the fold's lock shared, so no fold runs beside it: an hour it
///   finds not folded is folded after it commits;
/// - the fold reads an hour's marks before its minutes, so the minutes it reads hold every
///   batch whose mark it read, and deletes only the marks it read;
/// - the report takes a stored hour only while no mark is left on it.
/// The hour between `markAfter` and `foldAfter` is for a batch's transaction to commit: one
/// received before an hour was sealed for marks and still open when the fold read its minutes
/// would have to have lasted that long.
extension CollectorSchema {
    /// How long after its end a batch touching an hour marks it.
    static let markAfter = 3_600.0
    /// How long after its end an hour is folded.
    static let foldAfter = 7_200.0
    /// Hours one fold transaction takes at most: a few seconds' work, then batches go on.
    static let hoursPerFold = 2_000

    static func hourTables(_ dialect: Dialect) -> [String] { [
        "CREATE TABLE coverage_hours (channel TEXT NOT NULL, hour BIGINT NOT NULL, summary TEXT NOT NULL, PRIMARY KEY (channel, hour))",
        // A mark's id tells the marks a fold read from those added after it.
        "CREATE TABLE coverage_marks (id \(dialect.rowID), channel TEXT NOT NULL, hour BIGINT NOT NULL)",
        "CREATE INDEX coverage_marks_hour ON coverage_marks (channel, hour)",
        // The hour each channel's folding has reached: every hour before it was folded once.
        "CREATE TABLE coverage_folded (channel TEXT PRIMARY KEY, through BIGINT NOT NULL)",
    ] }

    /// The hours of `batch`'s deliveries that ended `markAfter` before it was received, in
    /// order: those a fold may have taken.
    static func lateHours(_ batch: CollectedBatch) -> [(channel: String, hour: Int)] {
        // By the clamped minute: a library's batch may say it was received at any time.
        let sealed = CoverageHour.hour(of: CoverageMinute.minute(of: batch.receivedAt - markAfter))
        var hours: [String: Set<Int>] = [:]
        for collected in batch.records where collected.record.delivery != nil {
            let hour = CoverageHour.hour(of: CoverageMinute.minute(of: collected.record.sentAt))
            if hour < sealed { hours[collected.record.channel ?? "", default: []].insert(hour) }
        }
        return hours.flatMap { channel, set in set.map { (channel, $0) } }.sorted { ($0.channel, $0.hour) < ($1.channel, $1.hour) }
    }

    /// Taken first by a batch with late hours (PostgreSQL), shared, for its transaction: a fold,
    /// which takes it alone, then never runs beside it, so the batch sees every hour folded.
    static let lateBatchLock = sharedLock(foldLock)

    /// Marks those of `late` hours (`lateHours`) a fold has stored: an hour not folded yet is
    /// folded later, after this batch, from minutes that hold it.
    static func marks(_ late: [(channel: String, hour: Int)], dialect: Dialect) -> [Statement] {
        let folded = "EXISTS (SELECT 1 FROM coverage_hours h WHERE h.channel = k.channel AND h.hour = k.hour)"
        guard dialect == .sqlite else {
            return late.isEmpty ? [] : [Statement("""
                INSERT INTO coverage_marks (channel, hour) SELECT k.channel, k.hour FROM unnest(?::text[], ?::int8[]) AS k (channel, hour) WHERE \(folded)
                """, [.texts(late.map(\.channel)), .integers(late.map(\.hour))])]
        }
        return stride(from: 0, to: late.count, by: foldRows).map { start in
            let chunk = late[start..<min(start + foldRows, late.count)]
            return Statement("""
                WITH k (channel, hour) AS (VALUES \(Array(repeating: "(?, ?)", count: chunk.count).joined(separator: ", ")))
                INSERT INTO coverage_marks (channel, hour) SELECT k.channel, k.hour FROM k WHERE \(folded)
                """, chunk.flatMap { [Value.text($0.channel), .integer($0.hour)] })
        }
    }

    /// The channel's stored hours in `hours` that no mark is left on, as one text of lines
    /// `<hour> <summary>`: a month's 720 rows a channel, each a round of the protocol and of
    /// decoding, were most of the reading.
    static func hours(channel: String, hours: Range<Int>, dialect: Dialect) -> Statement {
        let lines = dialect == .postgres ? "string_agg(hour || ' ' || summary, chr(10))" : "group_concat(hour || ' ' || summary, char(10))"
        return Statement("""
            SELECT \(lines) FROM coverage_hours h WHERE channel = ? AND hour >= ? AND hour < ?
            AND NOT EXISTS (SELECT 1 FROM coverage_marks m WHERE m.channel = h.channel AND m.hour = h.hour)
            """, [.text(channel), .integer(hours.lowerBound), .integer(hours.upperBound)])
    }

    /// The rows of `hours(channel:hours:dialect:)`, read: a summary this version cannot read is
    /// an error named, never an hour taken as empty.
    static func storedHours(_ rows: [Row], channel: String) throws(StoreError) -> [Int: CoverageHour] {
        guard let text = rows.first?.first?.text else { return [:] }
        guard let hours = CoverageHour.lines(text) else { throw StoreError("a stored hour of \(channel) is not one this version reads") }
        return hours
    }

    /// The advisory lock (PostgreSQL) a fold holds: any number the collector alone uses.
    static let foldLock = 0x6964_3368_6f75_72

    static func purgeHours(before time: Double) -> [Statement] {
        // An hour the purge cut into goes: folded again from what is left, it would differ.
        let hour = (CoverageMinute.minute(of: time) + 59) / 60
        return [Statement("DELETE FROM coverage_hours WHERE hour < ?", [.integer(hour)]),
                Statement("DELETE FROM coverage_marks WHERE hour < ?", [.integer(hour)]),
                Statement("UPDATE coverage_folded SET through = ? WHERE through < ?", [.integer(hour), .integer(hour)])]
    }

    /// Folds up to `hoursPerFold` hours that ended `foldAfter` before `now`, marked ones first,
    /// inside a transaction the caller opened (one fold at a time: the caller's lock); the
    /// number folded.
    static func foldHours(now: Double, run: (Statement) async throws -> [Row]) async throws -> Int {
        let sealed = CoverageHour.hour(of: CoverageMinute.minute(of: now - foldAfter))
        // Marks first: the minutes read after them hold every batch whose mark was read.
        let marks = try await run(Statement("""
            SELECT id, channel, hour FROM coverage_marks WHERE hour < ? ORDER BY channel, hour LIMIT ?
            """, [.integer(sealed), .integer(hoursPerFold)]))
        var wanted: [String: Set<Int>] = [:]
        for mark in marks { wanted[mark[1].text ?? "", default: []].insert(mark[2].integer ?? 0) }
        var budget = hoursPerFold - wanted.values.reduce(0) { $0 + $1.count }
        var through: [String: Int] = [:]
        let channels = try await run(Statement("""
            SELECT c.channel, c.first_at, c.last_at, c.deleted_at, f.through FROM channels c
            LEFT JOIN coverage_folded f ON f.channel = c.channel ORDER BY c.channel
            """))
        for row in channels where budget > 0 {
            guard let channel = row[0].text, let first = row[1].real, let last = row[2].real else { continue }
            let from = row[4].integer ?? CoverageHour.hour(of: CoverageMinute.minute(of: first))
            let end = min(sealed, CoverageHour.hour(of: CoverageMinute.minute(of: max(last, row[3].real ?? last))) + 1)
            guard from < end else { continue }
            let to = min(end, from + budget)
            wanted[channel, default: []].formUnion(from..<to)
            budget -= to - from
            through[channel] = to
        }
        var folded = 0
        for (channel, hours) in wanted.sorted(by: { $0.key < $1.key }) {
            let sorted = hours.sorted()
            var minutes: [Int: [String: [CoverageMinute]]] = [:]
            // The channel's minutes read by runs of consecutive hours (a backlog is one run).
            var runs: [Range<Int>] = []
            for hour in sorted {
                if let last = runs.last, last.upperBound == hour { runs[runs.count - 1] = last.lowerBound..<(hour + 1) } else { runs.append(hour..<(hour + 1)) }
            }
            for (meter, list) in try await coverage(channel: channel, minutes: runs.map { $0.lowerBound * 60..<$0.upperBound * 60 }, rows: run) {
                for minute in list { minutes[CoverageHour.hour(of: minute.minute), default: [:]][meter, default: []].append(minute) }
            }
            for start in stride(from: 0, to: sorted.count, by: foldRows) {
                let chunk = sorted[start..<min(start + foldRows, sorted.count)]
                _ = try await run(Statement("""
                    INSERT INTO coverage_hours (channel, hour, summary) VALUES \(Array(repeating: "(?, ?, ?)", count: chunk.count).joined(separator: ", "))
                    ON CONFLICT (channel, hour) DO UPDATE SET summary = excluded.summary
                    """, chunk.flatMap { hour in
                        [Value.text(channel), .integer(hour), .text(CoverageHour(hour: hour, minutes: minutes[hour] ?? [:]).text)]
                    }))
            }
            folded += sorted.count
        }
        for start in stride(from: 0, to: marks.count, by: foldRows) {
            let chunk = marks[start..<min(start + foldRows, marks.count)]
            _ = try await run(Statement("DELETE FROM coverage_marks WHERE id IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ", ")))",
                                        chunk.map { .integer($0[0].integer ?? 0) }))
        }
        for (channel, hour) in through.sorted(by: { $0.key < $1.key }) {
            _ = try await run(Statement("""
                INSERT INTO coverage_folded (channel, through) VALUES (?, ?)
                ON CONFLICT (channel) DO UPDATE SET through = excluded.through
                """, [.text(channel), .integer(hour)]))
        }
        return folded
    }
}
