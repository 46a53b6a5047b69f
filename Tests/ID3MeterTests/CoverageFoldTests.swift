import Foundation
import Logging
import Testing
import ID3MeterReport
import SampleGenerator
@testable import ID3Meter
@testable import ID3MeterServe

/// The collector adds each batch's deliveries to the stored minutes (on PostgreSQL in the
/// database's own upsert, `PostgresBatch`): whatever the batches a meter's tags came in and their
/// order, the stored minutes must find the gaps of the tags themselves.
@Suite("collect: coverage folded batch by batch", .serialized, .timeLimit(.minutes(3)))
struct CoverageFoldTests {
    /// Channels each of one minute's tags of one meter, split into three batches at random (in
    /// time order, interleaved, or one batch's tags inside another's hole) and stored in a
    /// random order; each channel's stored minute against the tags' own gaps and counts.
    func foldsAsTheTagsSay(_ store: some RecordStore & CoverageReading) async throws {
        var random = SeededRandom(seed: 56)
        func uniform(_ range: Range<Double>) -> Double {
            range.lowerBound + Double(random.next() % 1_000_000) / 1_000_000 * (range.upperBound - range.lowerBound)
        }
        let minute = 29_916_660, start = Double(minute) * 60
        var factory = NielsenTagFactory(seed: 56)
        var times: [String: [Double]] = [:], parts: [[CollectedRecord]] = [[], [], []]
        for channel in (0..<300).map({ "ch\($0)" }) {
            // Sparse or dense, so that a hole is often there, split or not.
            let count = 1 + Int(random.next() % 6)
            let own = (0..<count).map { _ in start + (uniform(0..<60) * 1_000).rounded() / 1_000 }
            times[channel] = own
            for (index, time) in own.enumerated() {
                let part = channel.hasSuffix("0") ? index * 3 / count : Int(random.next() % 3)
                var record = MeterRecord.delivery(factory.owner(secondsIntoDay: index), context: TagContext(pts: Int64(index), origin: TagOrigin(source: "s"), programDateTime: nil),
                                                  at: Date(timeIntervalSince1970: time))
                (record.channel, record.meter) = (channel, "m")
                parts[part].append(CollectedRecord(record: record, json: String(decoding: record.jsonLine, as: UTF8.self)))
            }
        }
        for part in [2, 0, 1] {
            _ = try await store.store(CollectedBatch(id: "part-\(part)", meterVersion: "t", records: parts[part], receivedAt: start, postedBy: "t"))
        }
        for (channel, own) in times {
            let stored = try #require(try await store.coverage(channel: channel, minutes: [minute..<minute + 1])["m"])
            let stretches = ChannelDay.stretches(stored)
            let found = zip(stretches, stretches.dropFirst()).map { $0.upperBound...$1.lowerBound }
            #expect(found == CoverageMinuteTests.gaps(own) && stored.first?.creditable == own.count, "\(channel): \(own.sorted()) stored \(stored)")
            #expect(stored.first?.first == own.min() && stored.first?.last == own.max(), "\(channel)")
        }
        await store.close()
    }

    @Test(.enabled(if: TestPostgres.requested != nil, Comment(rawValue: TestPostgres.why)))
    func onPostgreSQL() async throws {
        try await foldsAsTheTagsSay(try await PostgresRecordStore.open(url: try TestPostgres.empty(), logger: Logger(label: "test")))
    }

    /// A database `collect` made before schema version 2 (no `coverage_hole`), holding a minute:
    /// brought up to date at start, its stored minute and new batches' overlapping tags add up.
    @Test(.enabled(if: TestPostgres.requested != nil, Comment(rawValue: TestPostgres.why)))
    func aVersionOneDatabaseIsBroughtUpToDate() async throws {
        let url = try TestPostgres.empty()
        let versionOne = CollectorSchema.migrations(.postgres)[0].joined(separator: ";\n") + """
            ;
            CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1);
            INSERT INTO coverage VALUES ('news', 29916660, 'm', 2, 0, 0, 0, 1794999600, 1794999650, 1794999600, 1794999650, NULL, NULL)
            """
        let made = try Command.runTool("/usr/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-qc", versionOne])
        try #require(made.status == 0, "\(made.output)")
        let store = try await PostgresRecordStore.open(url: url, logger: Logger(label: "test"))
        var factory = NielsenTagFactory(seed: 57)
        // Inside the stored minute's hole (1794999600 to 1794999650): the hole is split and the
        // 30 s rule leaves none (gaps of 20 and 30 s: 30 is a gap, from 20 to 50).
        let records = [1_794_999_620.0].map { time in
            var record = MeterRecord.delivery(factory.owner(secondsIntoDay: 1), context: TagContext(pts: 1, origin: TagOrigin(source: "s"), programDateTime: nil),
                                              at: Date(timeIntervalSince1970: time))
            (record.channel, record.meter) = ("news", "m")
            return CollectedRecord(record: record, json: String(decoding: record.jsonLine, as: UTF8.self))
        }
        _ = try await store.store(CollectedBatch(id: "after-upgrade", meterVersion: "t", records: records, receivedAt: 1_795_000_000, postedBy: "t"))
        let minute = try #require(try await store.coverage(channel: "news", minutes: [29_916_660..<29_916_661])["m"]?.first)
        await store.close()
        #expect(minute.creditable == 3 && minute.first == 1_794_999_600 && minute.last == 1_794_999_650)
        #expect(minute.hole == 1_794_999_620...1_794_999_650, "\(minute)")
        let version = try Command.runTool("/usr/bin/psql", [url, "-tAc", "SELECT max(version) FROM schema_version"])
        #expect(version.output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(CollectorSchema.migrations(.postgres).count)")
    }

    @Test func onSQLite() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await foldsAsTheTagsSay(try await SQLiteRecordStore.open(path: folder.appendingPathComponent("records.db").path, logger: Logger(label: "test")))
    }
}
