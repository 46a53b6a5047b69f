import Foundation
import Logging
import Testing
import SampleGenerator
@testable import ID3Meter
@testable import ID3MeterServe

/// PostgreSQL keeps records in a table a day and the pair key in generations (`RecordDays`):
/// retention drops a day's table whole, and a pair's copy of a tag is kept once across days,
/// generations, concurrent batches and a database made before.
@Suite("collect: records by day on PostgreSQL", .serialized, .timeLimit(.minutes(3)),
       .enabled(if: TestPostgres.requested != nil, Comment(rawValue: TestPostgres.why)))
struct RecordDaysTests {
    /// 2026-11-18T11:06:40Z, a batch's arrival; its day starts at `day`.
    static let now = 1_795_000_000.0
    static let day = 1_794_960_000.0

    @Test func aDayIsATableAndRetentionDropsIt() async throws {
        let url = try TestPostgres.empty()
        let store = try await PostgresRecordStore.open(url: url, lockWait: .seconds(5), logger: Logger(label: "test"))
        // The retention's cutoff three days back: days from then to tomorrow get tables. The
        // retention makes today's and tomorrow's ahead, by the clock.
        let today = (Date().timeIntervalSince1970 / 86_400).rounded(.down) * 86_400
        #expect(try await store.purge(before: Self.now - 3 * 86_400) == 0)
        let made = try Self.psql(url, "SELECT name FROM record_partitions ORDER BY name")
        // (Midnight may pass during the purge: then the clock's next day and the one after.)
        #expect(made == [Self.table(today), Self.table(today + 86_400)] || made == [Self.table(today + 86_400), Self.table(today + 2 * 86_400)], "\(made)")
        var factory = NielsenTagFactory(seed: 61)
        let times = [-2, -1, 0].map { Self.day + Double($0) * 86_400 + 3_600 } + [Self.day - 10 * 86_400, Self.day + 4 * 86_400 + 60]
        let tags = times.map { (time: $0, owner: factory.owner(secondsIntoDay: Int($0) % 86_400)) }
        let first = try await store.store(Self.batch("n1-1", tags, meter: "n1", receivedAt: Self.now))
        #expect(first.kept == 5)
        #expect(try Self.psql(url, "SELECT name FROM record_partitions WHERE before < \(Self.day + 10 * 86_400) ORDER BY name")
                == [-2, -1, 0].map { Self.table(Self.day + Double($0) * 86_400) })
        // Ten days back (older than the cutoff) and four ahead (a clock off): not a table each.
        #expect(try Self.psql(url, "SELECT count(*) FROM records_outside") == ["2"])
        // The other meter of the pair: the same tags, none kept again.
        #expect(try await store.store(Self.batch("n2-1", tags, meter: "n2", receivedAt: Self.now + 5)).kept == 0)

        // Four days on, a tag of that day: its table is made, and takes the early row with it.
        let later = [(time: Self.day + 4 * 86_400 + 7_200, owner: factory.owner(secondsIntoDay: 7_200))]
        #expect(try await store.store(Self.batch("n1-2", later, meter: "n1", receivedAt: Self.now + 4 * 86_400)).kept == 1)
        #expect(try Self.psql(url, "SELECT count(*) FROM \(Self.table(Self.day + 4 * 86_400))") == ["2"])
        #expect(try Self.psql(url, "SELECT count(*) FROM records_outside") == ["1"])

        // The retention at the start of yesterday: the day before goes whole, the old row alone.
        let deleted = try await store.purge(before: Self.day - 86_400)
        #expect(deleted == 1, "rows deleted: \(deleted)")
        #expect(try Self.psql(url, "SELECT to_regclass('\(Self.table(Self.day - 2 * 86_400))') IS NULL") == ["t"])
        let left = try await store.records(channel: "news", from: 0, to: 2_000_000_000)
        #expect(left.map(\.sentAt) == [Self.day - 86_400 + 3_600, Self.day + 3_600, Self.day + 4 * 86_400 + 60, Self.day + 4 * 86_400 + 7_200])
        // The day's records are gone, their pair keys are not: the other meter's copy, late, is not kept.
        #expect(try await store.store(Self.batch("n2-2", Array(tags.prefix(1)), meter: "n2", receivedAt: Self.now + 4 * 86_400)).kept == 0)
        // A library's batch may hold any time (the collector's intake refuses these): kept
        // outside the day tables, no table made for them, nothing trapped.
        let far = [1e300, -1e300].map { (time: $0, owner: factory.owner(secondsIntoDay: 5)) }
        #expect(try await store.store(Self.batch("far", far, meter: "n1", receivedAt: 1e300)).kept == 2)
        #expect(try Self.psql(url, "SELECT count(*) FROM records_outside") == ["2"])
        #expect(try Self.psql(url, "SELECT count(*) FROM record_partitions WHERE before < \(Self.day + 10 * 86_400)") == ["3"])
        await store.close()
    }

    /// Two collectors on one database bring the same new days at once: each day is made once,
    /// both batches are kept, the pair once.
    @Test func twoCollectorsMakeADayOnce() async throws {
        let url = try TestPostgres.empty()
        let (one, two) = (try await PostgresRecordStore.open(url: url, lockWait: .seconds(5), logger: Logger(label: "test")),
                          try await PostgresRecordStore.open(url: url, lockWait: .seconds(5), logger: Logger(label: "test")))
        var factory = NielsenTagFactory(seed: 64)
        let tags = [0, 1].map { (time: Self.day + Double($0) * 86_400 + 60, owner: factory.owner(secondsIntoDay: 60 + $0)) }
        async let first = one.store(Self.batch("n1", tags, meter: "n1", receivedAt: Self.now + 86_400))
        async let second = two.store(Self.batch("n2", tags, meter: "n2", receivedAt: Self.now + 86_400))
        let kept = try await [first.kept, second.kept]
        #expect(kept.sorted() == [0, 2], "\(kept)")
        #expect(try Self.psql(url, "SELECT name FROM record_partitions ORDER BY name") == [Self.table(Self.day), Self.table(Self.day + 86_400)])
        #expect(try Self.psql(url, "SELECT count(*) FROM records_outside") == ["0"])
        await one.close()
        await two.close()
    }

    /// A day is made holding the partitions' lock alone; a batch stuck with it shared holds
    /// that back: the batch that brings the day is refused after the wait, saying why (the
    /// collector answers 503 and the meter sends it again), and kept once the lock is let go.
    @Test func aDayWaitsForTheLockAtMostTheWait() async throws {
        let url = try TestPostgres.empty()
        let store = try await PostgresRecordStore.open(url: url, lockWait: .seconds(1), logger: Logger(label: "test"))
        var factory = NielsenTagFactory(seed: 66)
        let tags = [(time: Self.now, owner: factory.owner(secondsIntoDay: 40_000))]
        let held = try HeldLock(url: url, key: CollectorSchema.partitionLock)
        let clock = ContinuousClock()
        let start = clock.now
        let failure = await #expect(throws: StoreError.self) { _ = try await store.store(Self.batch("n1", tags, meter: "n1", receivedAt: Self.now)) }
        let waited = clock.now - start
        #expect(waited >= .milliseconds(950) && waited < .seconds(6), "gave up after \(waited)")
        #expect(failure?.description == "cannot make the records' table of \(Self.table(Self.day)): canceling statement due to lock timeout",
                "\(failure.map(\.description) ?? "")")
        #expect(try held.release())
        #expect(try await store.store(Self.batch("n1", tags, meter: "n1", receivedAt: Self.now)).kept == 1)
        #expect(try Self.psql(url, "SELECT name FROM record_partitions") == [Self.table(Self.day)])
        await store.close()
    }

    @Test func aPairIsKeptOnceAcrossGenerations() async throws {
        let url = try TestPostgres.empty()
        let store = try await PostgresRecordStore.open(url: url, lockWait: .seconds(5), logger: Logger(label: "test"))
        var factory = NielsenTagFactory(seed: 62)
        func tags(_ count: Int, from start: Double) -> [(time: Double, owner: String)] {
            (0..<count).map { (time: start + Double($0), owner: factory.owner(secondsIntoDay: Int(start) % 86_400 + $0)) }
        }
        let early = tags(50, from: Self.now)
        #expect(try await store.store(Self.batch("a", early, meter: "n1", receivedAt: Self.now)).kept == 50)
        // A cutoff after the first generation started: the next one starts.
        let wall = Date().timeIntervalSince1970
        _ = try await store.purge(before: wall + 1)
        #expect(try Self.psql(url, "SELECT generation FROM key_generations ORDER BY 1") == ["1", "2"])
        // Started when the switch came, not when the one before it did: else every purge would switch.
        let started = try #require(Double(try Self.psql(url, "SELECT started_at FROM key_generations WHERE generation = 2").first ?? ""))
        #expect(started >= wall && started < Date().timeIntervalSince1970 + 1, "\(started)")
        _ = try await store.purge(before: wall)
        #expect(try Self.psql(url, "SELECT generation FROM key_generations ORDER BY 1") == ["1", "2"], "no switch for a generation younger than the cutoff")
        let more = tags(30, from: Self.now + 100)
        #expect(try await store.store(Self.batch("b", early + more, meter: "n2", receivedAt: Self.now + 200)).kept == 30,
                "the first generation's keys still hold")
        #expect(try Self.psql(url, "SELECT count(*) FROM delivery_keys_2") == ["30"])

        // Two meters' batches at once, over the same channel, while the next generation starts.
        let cutoff = Date().timeIntervalSince1970 + 1
        let shared = tags(2_000, from: Self.now + 1_000)
        let kept = try await withThrowingTaskGroup(of: Int.self) { group in
            for meter in ["n1", "n2"] {
                for part in 0..<4 {
                    let mine = Array(shared[(part * 500)..<((part + 1) * 500)])
                    group.addTask {
                        try await store.store(Self.batch("\(meter)-\(part)", meter == "n1" ? mine : mine.reversed(), meter: meter,
                                                         receivedAt: Self.now + 3_000)).kept
                    }
                }
            }
            group.addTask { _ = try await store.purge(before: cutoff); return 0 }
            return try await group.reduce(0, +)
        }
        // (The purges' cutoffs, past every record here, deleted the records; the keys stay.)
        #expect(kept == 2_000)
        #expect(try Self.psql(url, "SELECT count(*), count(DISTINCT (channel, tag_id)) FROM delivery_keys") == ["2030|2030"])
        // The third generation dropped the first: its keys had outlived the retention.
        #expect(try Self.psql(url, "SELECT generation FROM key_generations ORDER BY 1") == ["2", "3"])
        #expect(try Self.psql(url, "SELECT to_regclass('delivery_keys_1') IS NULL") == ["t"])
        #expect(try await store.store(Self.batch("c", early, meter: "n3", receivedAt: Self.now + 4_000)).kept == 50)
        await store.close()
    }

    /// A database of schema version 3, with records: its table becomes the first partition, its
    /// pairs the first generation; retention deletes its old rows, then drops it.
    @Test func aDatabaseMadeBeforeKeepsItsRecordsAndPairs() async throws {
        let url = try TestPostgres.empty()
        var factory = NielsenTagFactory(seed: 63)
        let old = (0..<3).map { (time: Self.now + Double($0) * 3_600, owner: factory.owner(secondsIntoDay: $0 * 3_600)) }
        try Self.makeVersionThree(url, holding: Self.batch("before", old, meter: "n1", receivedAt: Self.now))
        let store = try await PostgresRecordStore.open(url: url, lockWait: .seconds(5), logger: Logger(label: "test"))
        #expect(try Self.psql(url, "SELECT max(version) FROM schema_version") == ["\(CollectorSchema.migrations(.postgres).count)"])
        // The old table holds to the end of the day after the later of its last record and now.
        let wallDay = (Date().timeIntervalSince1970 / 86_400).rounded(.down) * 86_400
        #expect(try Self.psql(url, "SELECT name, before FROM record_partitions") == ["records_legacy|\(Int(max(wallDay, Self.day) + 86_400))"])
        #expect(try await store.records(channel: "news", from: 0, to: 2_000_000_000).map(\.sentAt) == old.map(\.time))
        #expect(try await store.store(Self.batch("n2", old, meter: "n2", receivedAt: Self.now + 60)).kept == 0, "a pair kept before")
        let next = [(time: Self.now + 7_200 + 1, owner: factory.owner(secondsIntoDay: 9))]
        #expect(try await store.store(Self.batch("n2-new", next, meter: "n2", receivedAt: Self.now + 60)).kept == 1)

        #expect(try await store.purge(before: Self.now + 1) == 1, "the old table's rows go one by one")
        #expect(try await store.records(channel: "news", from: 0, to: 2_000_000_000).count == 3)
        _ = try await store.purge(before: max(wallDay, Self.day) + 86_400)
        #expect(try Self.psql(url, "SELECT to_regclass('records_legacy') IS NULL") == ["t"])
        await store.close()
    }

    /// An upgrade waits for what holds its tables (here a session holding the records' table, as
    /// a long upgrade would take): the first connection's wait does not cut it short.
    @Test func anUpgradeLongerThanTheConnectionsWaitIsNotCutShort() async throws {
        let url = try TestPostgres.empty()
        var factory = NielsenTagFactory(seed: 67)
        try Self.makeVersionThree(url, holding: Self.batch("before", [(time: Self.now, owner: factory.owner(secondsIntoDay: 1))], meter: "n1",
                                                           receivedAt: Self.now))
        let held = try HeldLock(url: url, taking: "LOCK TABLE records IN ACCESS SHARE MODE")
        let clock = ContinuousClock()
        let start = clock.now
        let opening = Task { try await PostgresRecordStore.open(url: url, lockWait: .seconds(5), connectTimeout: .seconds(1), logger: Logger(label: "test")) }
        // The upgrade waiting for the table: let it wait past the connection's second.
        var waiting = false
        for _ in 0..<500 where !waiting {
            waiting = try Self.psql(url, "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'records'::regclass") != ["0"]
        }
        try #require(waiting, "the upgrade never waited for the records' table")
        try await Task.sleep(until: start + .milliseconds(1_500))
        #expect(try held.release())
        let store = try await opening.value
        #expect(clock.now - start > .seconds(1))
        #expect(try Self.psql(url, "SELECT max(version) FROM schema_version") == ["\(CollectorSchema.migrations(.postgres).count)"])
        #expect(try await store.records(channel: "news", from: 0, to: 2_000_000_000).count == 1)
        await store.close()
    }

    /// A database as schema version 3 made it, holding `batch`'s records.
    static func makeVersionThree(_ url: String, holding batch: CollectedBatch) throws {
        let rows = batch.records.map { collected in
            let record = collected.record
            return "('\(batch.id)', 'send_id3', \(record.sentAt), '\(record.channel ?? "")', '\(record.meter ?? "")', '\(record.delivery?.tagID ?? "")', "
                + "'\(record.delivery?.payload ?? "")', $j$\(collected.json)$j$)"
        }
        let versionThree = CollectorSchema.migrations(.postgres).prefix(3).flatMap { $0 }.joined(separator: ";\n") + """
            ;
            CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1), (2), (3);
            INSERT INTO records (batch, type, sent_at, channel, meter, tag_id, payload, record) VALUES \(rows.joined(separator: ", "))
            """
        let made = try Command.runTool("/usr/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-qc", versionThree])
        guard made.status == 0 else { throw TestFailure("cannot make a version-3 database: \(made.output)") }
    }

    static func batch(_ id: String, _ tags: [(time: Double, owner: String)], meter: String, receivedAt: Double) -> CollectedBatch {
        let records = tags.map { tag in
            var record = MeterRecord.delivery(tag.owner, context: TagContext(pts: 1, origin: TagOrigin(source: "s"), programDateTime: nil),
                                              at: Date(timeIntervalSince1970: tag.time))
            (record.channel, record.meter) = ("news", meter)
            return CollectedRecord(record: record, json: String(decoding: record.jsonLine, as: UTF8.self))
        }
        return CollectedBatch(id: id, meterVersion: "t", records: records, receivedAt: receivedAt, postedBy: "t")
    }

    /// The table of `time`'s UTC day, named by Foundation's calendar.
    static func table(_ time: Double) -> String {
        let formatter = DateFormatter()
        (formatter.locale, formatter.timeZone, formatter.dateFormat) = (Locale(identifier: "en_US_POSIX"), TimeZone(identifier: "UTC"), "yyyyMMdd")
        return "records_" + formatter.string(from: Date(timeIntervalSince1970: time))
    }

    /// The rows of `query`, a line each, its columns joined by `|`.
    static func psql(_ url: String, _ query: String) throws -> [String] {
        let run = try Command.runTool("/usr/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-tAc", query])
        guard run.status == 0 else { throw TestFailure("psql \(query): \(run.output)") }
        return run.output.split(separator: "\n").map(String.init)
    }
}
