import Foundation
import Logging
import Testing
@testable import ID3MeterCore
import ID3MeterReport
@testable import ID3MeterServe

/// `id3-meter report`: a planted day (PlantedLineupDay) read back from record files, from the
/// collector's SQLite and PostgreSQL databases, and drawn in a browser: every gap where the
/// writer put it, to the second, with the cause its records give first.
@Suite("report: a line-up's days", .serialized, .timeLimit(.minutes(5)))
struct CoverageReportTests {
    static let planted = PlantedLineupDay()
    static let arguments = ["--day", PlantedLineupDay.day, "--time-zone", PlantedLineupDay.zone]

    /// `time` as the report writes it, by Foundation's own ISO 8601 formatter; the day's end as
    /// ISO 8601's 24:00:00 of the day.
    static func iso(_ time: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: PlantedLineupDay.zone)
        guard time == PlantedLineupDay.start + 86_400 else { return formatter.string(from: Date(timeIntervalSince1970: time)) }
        return PlantedLineupDay.day + "T24:00:00" + formatter.string(from: Date(timeIntervalSince1970: time - 1)).suffix(6)
    }

    /// The channel's time on air within the day: from its first record to its deletion or the day's end.
    static func onAir(_ channel: String) -> Range<Double> {
        let records = planted.records.filter { $0.channel == channel }
        let deleted = records.first { if case .custom(let custom) = $0.content { custom.fields["action"] == "delete" } else { false } }
        return records.map(\.sentAt).min()!..<(deleted?.sentAt ?? PlantedLineupDay.start + 86_400)
    }

    static func report(_ arguments: [String]) throws -> CoverageReport {
        let result = try Command.run(["report", "--format", "json"] + Self.arguments + arguments)
        try #require(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode(CoverageReport.self, from: Data(result.stdout.utf8))
    }

    /// Everything the writer planted, as the report must say it.
    static func verify(_ report: CoverageReport) {
        #expect(report.days == [PlantedLineupDay.day] && report.timeZone == PlantedLineupDay.zone)
        #expect(report.channels.map(\.channel).sorted() == ["late", "news", "sport"])
        for day in report.channels {
            let onAir = onAir(day.channel)
            #expect(day.onAirFrom == iso(onAir.lowerBound) && day.onAirTo == iso(onAir.upperBound), "\(day.channel)")
            #expect(day.onAirMinutes == Int((onAir.upperBound / 60).rounded(.up)) - Int((onAir.lowerBound / 60).rounded(.down)), "\(day.channel)")
            #expect(day.creditedMinutes == planted.creditedMinutes(day.channel, onAir: onAir), "\(day.channel)")
            let expected = planted.gaps(day.channel, onAir: onAir)
            #expect(day.gaps.map(\.from) == expected.map { iso($0.from) }, "\(day.channel)")
            #expect(day.gaps.map(\.to) == expected.map { iso($0.to) }, "\(day.channel)")
            #expect(day.gaps.map(\.seconds) == expected.map { Int($0.to - $0.from) }, "\(day.channel)")
            #expect(day.gaps.map { $0.causes.first?.kind } == expected.map(\.cause), "\(day.channel)")
            #expect(day.tags.creditable == Set(planted.creditable[day.channel] ?? []).count, "\(day.channel)")
            // INFO cadence: intervals over 310 s, the edges of its time on air included.
            let info = Set(planted.info[day.channel] ?? []).filter { onAir.contains($0) }.sorted()
            let edges = [onAir.lowerBound] + info + [onAir.upperBound]
            #expect(day.info.tags == info.count && day.info.intervalsOverLimit == zip(edges, edges.dropFirst()).count { $1 - $0 > 310 },
                    "\(day.channel)")
        }
        let news = report.channels.first { $0.channel == "news" }
        // The seven gaps the writer planted, each with its own cause.
        #expect(news?.gaps.count == 7)
        #expect(news?.gaps.first?.causes.first?.detail == "the stream could not be opened: HTTP 404")
        #expect(news?.tags.placeholder == 20)
        #expect(news?.failingChecks.map { "\($0.check) \($0.seconds)" } == ["tag_spacing 1800", "renditions 1200", "info_cadence 900"])
        // An audit's renditions at fault: the last words that named them.
        #expect(news?.failingChecks.first { $0.check == "renditions" }?.detail == PlantedLineupDay.renditionsDiffer)
        let sport = report.channels.first { $0.channel == "sport" }
        // b alone credited a's half hour; both missed the failover's two minutes.
        #expect(sport?.meters.map(\.meter) == ["a", "b"] && sport?.meters.map(\.soleMinutes) == [0, 30])
        #expect(sport?.gaps.first?.causes.map(\.kind) == [.failover, .warning] && sport?.gaps.first?.causes.first?.meters == ["a", "b"])
    }

    @Test func recordFilesGiveEveryPlantedGapItsLengthAndCause() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("records.jsonl")
        try Self.planted.jsonLines.write(to: file)
        Self.verify(try Self.report([file.path]))
    }

    /// The planted day stored as meters post it: each meter's records in batches, in the order
    /// they were made, through the collector's own store.
    static func store(into store: some RecordStore) async throws {
        for meter in ["a", "b"] {
            let records = planted.records.filter { $0.meter == meter }
            for (index, start) in stride(from: 0, to: records.count, by: 500).enumerated() {
                let batch = records[start..<min(start + 500, records.count)].map { CollectedRecord(record: $0, json: String(decoding: $0.jsonLine, as: UTF8.self)) }
                let receipt = try await store.store(CollectedBatch(id: "\(meter)-\(index)", meterVersion: "0.12.0", records: batch,
                                                                   receivedAt: batch.last!.record.sentAt, postedBy: "local"))
                #expect(!receipt.alreadyHad)
            }
        }
        await store.close()
    }

    @Test func theCollectorsSQLiteDatabaseSaysTheSame() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("records.db").path
        try await Self.store(into: try await SQLiteRecordStore.open(path: database, logger: Logger(label: "test")))
        let fromDatabase = try Self.report(["--database", database])
        Self.verify(fromDatabase)
        let file = folder.appendingPathComponent("records.jsonl")
        try Self.planted.jsonLines.write(to: file)
        #expect(fromDatabase.channels == (try Self.report([file.path])).channels, "the database and the files tell one story")
    }

    @Test(.enabled(if: TestPostgres.requested != nil, Comment(rawValue: TestPostgres.why)))
    func thePostgreSQLDatabaseSaysTheSame() async throws {
        let url = try TestPostgres.empty()
        try await Self.store(into: try await PostgresRecordStore.open(url: url, logger: Logger(label: "test")))
        Self.verify(try Self.report(["--database", url]))
    }

    /// A month's report reads coverage and the channel's other records through their indexes,
    /// never a scan of the deliveries: asked of SQLite's own planner.
    @Test func theReportsQueriesUseTheirIndexes() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("records.db").path
        await (try await SQLiteRecordStore.open(path: database, logger: Logger(label: "test"))).close()
        for statement in [CollectorSchema.coverage(channel: "news", minutes: [0..<100, 200..<300, 400..<460]), CollectorSchema.notable(channel: "news", from: 0, to: 1),
                          CollectorSchema.hours(channel: "news", hours: 0..<10, dialect: .sqlite)] {
            let script = "import sqlite3, sys; print([row[-1] for row in sqlite3.connect(sys.argv[1]).execute('EXPLAIN QUERY PLAN ' + sys.argv[2], [None] * sys.argv[2].count('?'))])"
            let plan = try Command.runTool("/usr/bin/env", ["python3", "-c", script, database, statement.sql])
            #expect(plan.status == 0 && plan.output.contains("USING INDEX") && !plan.output.contains("SCAN records") && !plan.output.contains("SCAN coverage"),
                    "\(plan.output)")
        }
    }

    /// The HTML page as a browser draws it: the worst channel first in the heat map, the longest
    /// gap on top of the gap table with its length and cause, and each channel's day a strip of
    /// its 1,440 minutes, within the width of a laptop and of a phone.
    @Test func thePageShowsTheWorstFirstInABrowser() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("records.jsonl"), page = folder.appendingPathComponent("day.html")
        try Self.planted.jsonLines.write(to: file)
        let result = try Command.run(["report", "--output", page.path] + Self.arguments + [file.path])
        try #require(result.status == 0, "\(result.stderr)")
        let longest = Self.planted.gaps("news", onAir: Self.onAir("news")).max { $0.to - $0.from < $1.to - $1.from }!
        struct Drawn: Decodable {
            var heat: [String], gaps: Int, firstGap: [String], strips: [Double], overflows: Bool
        }
        let drawn = try await offThePool { () throws -> [String] in
            let browser = try HeadlessBrowser()
            defer { browser.close() }
            return try [1_280, 390].map { width in
                let session = try browser.open(page.absoluteString, width: width)
                try browser.waitUntil("document.querySelectorAll('svg.strip').length > 0", session: session)
                if width == 1_280 { try HTMLReportTests.screenshot(try browser.screenshot(session: session, width: width), named: "report-day.png") }
                return try browser.evaluate("""
                    JSON.stringify((() => {
                      const text = (e) => e ? e.textContent.trim() : null;
                      const gapRows = [...document.querySelectorAll('table.gaps')[0].querySelectorAll('tbody tr')];
                      return {
                        heat: [...document.querySelectorAll('table.heat tbody th')].map(text),
                        gaps: gapRows.length,
                        firstGap: gapRows[0] ? [...gapRows[0].children].map(text) : [],
                        strips: [...document.querySelectorAll('svg.strip')].map(s => [...s.querySelectorAll('rect')].reduce((n, r) => n + r.width.baseVal.value, 0)),
                        overflows: document.documentElement.scrollWidth > window.innerWidth
                      };
                    })())
                    """, session: session) as? String ?? ""
            }
        }
        for json in drawn {
            let page = try JSONDecoder().decode(Drawn.self, from: Data(json.utf8))
            #expect(page.heat == ["news", "sport", "late"], "the most seconds without credit first")
            #expect(page.gaps == 8)
            let first = page.firstGap
            #expect(first.count == 5 && first[0] == "news" && first[2] == String(Self.iso(longest.from).dropFirst(11).prefix(8)) && first[3] == "10 min 10 s"
                    && first[4].hasPrefix("stream_unreadable the stream could not be opened: HTTP 404"), "\(first)")
            #expect(page.strips == [1_440, 1_440, 1_440])
            #expect(!page.overflows)
        }
    }

    /// The CSV forms a backend reads, and the errors a user meets: each names the input and why.
    @Test func theCSVFormsAndTheErrorsNameTheirInput() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("records.jsonl")
        try Self.planted.jsonLines.write(to: file)
        let days = try Command.run(["report", "--format", "csv"] + Self.arguments + [file.path])
        let rows = days.stdout.split(separator: "\r\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(days.status == 0 && rows.count == 4 && rows[0].prefix(4) == ["day", "channel", "on_air_minutes", "credited_minutes"], "\(days.stdout)")
        let news = try #require(rows.first { $0.count > 8 && $0[1] == "news" })
        #expect(news[5] == "7" && news[7] == "610" && news[8] == "stream_unreadable", "\(news)")
        let gaps = try Command.run(["report", "--format", "gaps-csv"] + Self.arguments + [file.path])
        let gapRows = gaps.stdout.split(separator: "\r\n")
        #expect(gaps.status == 0 && gapRows.count == 9 && gapRows[1].hasPrefix("2026-11-20,news,2026-11-20T01:59:55+01:00,2026-11-20T02:10:05+01:00,610,"),
                "\(gaps.stdout)")

        let neither = try Command.run(["report", "--day", PlantedLineupDay.day])
        #expect(neither.status == 2 && neither.stderr.contains("give either --database or record files"), "\(neither.stderr)")
        let missing = try Command.run(["report", "--database", folder.appendingPathComponent("nothing.db").path])
        #expect(missing.status == 1 && missing.stderr.contains("nothing.db does not exist"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("nothing.db").path), "reading never makes a database")
        let badDay = try Command.run(["report", file.path, "--day", "2026-02-30"])
        #expect(badDay.status == 2 && badDay.stderr.contains("--day: 2026-02-30 is not a day"), "\(badDay.stderr)")
        // Standard output that cannot take the report (a full disk) is an error, not a crash.
        let full = try Command.run(["-c", "exec \"$0\" report \"$1\" > /dev/full", Command.binary.path, file.path], binary: URL(fileURLWithPath: "/bin/sh"))
        #expect(full.status == 1 && full.stderr.contains("cannot write the report to standard output"), "\(full.status) \(full.stderr)")
        let badZone = try Command.run(["report", file.path, "--time-zone", "Mars/Olympus"])
        #expect(badZone.status == 2 && badZone.stderr.contains("no zone named Mars/Olympus"), "\(badZone.stderr)")
    }
}
