import ArgumentParser
import Foundation
import ID3MeterReport
import ID3MeterServe
import Logging

struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Each channel's day from the records its meters posted: minutes credited, gaps and why.",
        discussion: """
            Reads the database `id3-meter collect` keeps (--database), or record files (a meter's \
            --output, serve's JSON lines). For each channel and day, in --time-zone: the minutes on \
            air in which a meter delivered a creditable tag (valid, DATA, PC CID known), every gap \
            of 30 s or more without one (from, to, length to the second, and what the records say \
            of it: records lost, no record at all, stream unreadable, playlist stale, only \
            uncreditable tags, no tags while segments came, a failover, a meter restart), INFO \
            cadence (the Validator's 310 s), the QA checks the meters found failing, and what each \
            meter credited when there are two. A channel is on air from its first record until \
            its line-up deleted it: meters that stopped leave a gap, not an absence.

            --format html is a page a person reads in a minute (a heat map of channels by day, the \
            longest gaps, each channel's day as a strip); csv one row per channel and day; \
            gaps-csv one row per gap, the longest first; json everything (docs/REPORT.md). \
            Without --format, the --output file's extension decides, else json.

            Exit status 0 when the report is written; 1 when the records cannot be read or the \
            report cannot be written; 2 on a usage error.
            """)

    @Option(help: ArgumentHelp("The collector's database: an SQLite file or postgres://USER:PASSWORD@HOST:PORT/DATABASE.",
                               valueName: "path|url"))
    var database: String?

    @Argument(help: ArgumentHelp("Record files (JSON lines) to read instead of a database.", valueName: "records"))
    var files: [String] = []

    @Option(help: ArgumentHelp("Report this channel only (repeatable).", valueName: "name"))
    var channel: [String] = []

    @Option(help: ArgumentHelp("The (last) day reported, YYYY-MM-DD (default: yesterday).", valueName: "day"))
    var day: String?

    @Option(help: ArgumentHelp("How many days, ending with --day: 7 for a week.", valueName: "count"))
    var days = 1

    @Option(help: ArgumentHelp("The operator's time zone, which days and times are in (default: the system's, or TZ).",
                               valueName: "zone"))
    var timeZone: String?

    @Option(help: ArgumentHelp("html, csv, gaps-csv or json.", valueName: "format"))
    var format: Format?

    @Option(name: .shortAndLong, help: ArgumentHelp("The file the report goes to, replaced whole once the report is made (through a symbolic link, its target); default: standard output.", valueName: "file"))
    var output: String?

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case html, csv, gapsCSV = "gaps-csv", json
    }

    func validate() throws {
        guard (database == nil) != files.isEmpty else {
            throw ValidationError("give either --database or record files, not \(database == nil ? "neither" : "both")")
        }
        try NumberCheck.check(days, "--days", in: 1...400)
        if let timeZone, TimeZone(identifier: timeZone) == nil { throw ValidationError("--time-zone: no zone named \(timeZone)") }
        if let day, calendar.bounds(of: day) == nil { throw ValidationError("--day: \(day) is not a day (YYYY-MM-DD, years 1 to 9999)") }
        if let day, calendar.days(ending: day, count: days) == nil {
            throw ValidationError("--days: \(days) days ending with \(day) would begin before 0001-01-01")
        }
        if let output, !WritablePath.isWritable(output) { throw ValidationError("--output: \(output) cannot be written") }
        if let output, output.hasSuffix("/") { throw ValidationError("--output: \(output) names a folder, not a file") }
    }

    private var calendar: ReportCalendar {
        ReportCalendar(zone: timeZone.flatMap(TimeZone.init(identifier:)) ?? TimeZone.current)
    }

    private var chosenFormat: Format {
        if let format { return format }
        switch output.map({ URL(fileURLWithPath: $0).pathExtension.lowercased() }) {
        case "html", "htm": return .html
        case "csv": return .csv
        default: return .json
        }
    }

    /// The report of `days` from the database or the record files.
    private func read(days: [String], builder: CoverageBuilder, progress: (Int, Int) -> Void) async throws(StoreError) -> CoverageReport {
        let only = channel.isEmpty ? nil : Set(channel)
        guard let database else {
            let records = try RecordFiles.read(files)
            if records.unreadableLines > 0 { Console.warning("\(records.unreadableLines) lines of the record files were not records") }
            return try await builder.report(days: days, from: records, source: files.joined(separator: ", "), channels: only, progress: progress)
        }
        var logger = Logger(label: "id3-meter")
        logger.logLevel = .warning
        return try await ReportDatabase(database).report(days: days, builder: builder, channels: only, logger: logger, progress: progress)
    }

    func run() async throws {
        let now = Date().timeIntervalSince1970
        let calendar = self.calendar
        let last = day ?? calendar.day(of: (calendar.bounds(of: calendar.day(of: now))?.lowerBound ?? now) - 3_600)
        guard let reported = calendar.days(ending: last, count: days) else {
            throw ValidationError("--days: \(days) days ending with \(last) would begin before 0001-01-01")
        }
        let builder = CoverageBuilder(calendar: calendar, now: now)
        // Progress is a courtesy: a terminal that cannot take it does not stop the report.
        let progress = isatty(STDERR_FILENO) == 1 ? { (done: Int, total: Int) in
            _ = try? FileHandle.standardError.write(contentsOf: Data("\rreport: \(done) of \(total) channels\(done == total ? "\n" : "")".utf8))
        } : { _, _ in }
        let report: CoverageReport
        do {
            report = try await read(days: reported, builder: builder, progress: progress)
        } catch {
            Console.error("\(database == nil ? "" : "--database: ")\(error)")
            throw ExitCode.failure
        }
        if report.channels.isEmpty, report.notBegun.count < report.days.count {
            let asked = report.days.count == 1 ? report.days[0] : "\(report.days[0]) to \(report.days[report.days.count - 1])"
            Console.warning("no channel was on air on \(asked) (\(calendar.zone.identifier)): "
                            + (report.holds.map { "the records are of \($0.first) to \($0.last)" } ?? "the source holds no records"))
        }
        if !report.notBegun.isEmpty {
            Console.warning("\(report.notBegun.joined(separator: ", ")) had not begun in \(calendar.zone.identifier) at \(report.generated): nothing of \(report.notBegun.count == 1 ? "it" : "them") is reported")
        }
        let text: Data = switch chosenFormat {
        case .html: Data(report.html().utf8)
        case .csv: Data(report.daysCSV().utf8)
        case .gapsCSV: Data(report.gapsCSV().utf8)
        case .json: report.json() + Data("\n".utf8)
        }
        guard let output else {
            do {
                try FileHandle.standardOutput.write(contentsOf: text)
            } catch {
                Console.error("cannot write the report to standard output: \(error.localizedDescription)")
                throw ExitCode.failure
            }
            return
        }
        do {
            try ReplacedFile.write(text, to: output)
        } catch {
            Console.error("--output: \(output) \(error)")
            throw ExitCode.failure
        }
    }
}
