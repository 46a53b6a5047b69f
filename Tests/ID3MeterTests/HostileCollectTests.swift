import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization
import Testing
@testable import ID3MeterCore
import ID3MeterReport
@testable import ID3MeterServe

/// `collect` and `report` as an attacker and a careless operator use them (issue 58): every
/// day and zone the report takes, names that read back equal, files that are not the
/// collector's, `-o` at links and FIFOs, 16 MB batches, a full connection cap, long tokens,
/// names that look like loopback, and the HTTP edges. Each case failed before its fix.
@Suite("collect and report under hostile input", .serialized, .timeLimit(.minutes(5)))
struct HostileCollectTests {
    /// A day in `zone` as a person writes it, by Foundation's own formatter.
    static func day(of time: Double, in zone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date(timeIntervalSince1970: time))
    }

    /// One channel heard at 2026-11-18 11:06:40 UTC, and the report's time an hour after.
    static let heardAt = 1_795_000_000.0
    static let now = heardAt + 3_600
    static let recordLine = #"{"type":"warning","sent_at":1795000000,"channel":"news","meter":"a","message":"m"}"# + "\n"

    /// Item 1: for every zone Foundation knows, days before, on and after the report's time, the
    /// calendar's ends and the clocks' changes, 1, 2 and 7 days long: never a trap; a day not
    /// begun at the report's time is named and has no channel; only a range reaching before the
    /// year 1 is refused.
    @Test func theReportIsTotalOverEveryDayAndZoneItTakes() async throws {
        let files = RecordFiles(bytes: Data(Self.recordLine.utf8), name: "f")
        var reports = 0
        for identifier in TimeZone.knownTimeZoneIdentifiers {
            let zone = try #require(TimeZone(identifier: identifier))
            let builder = CoverageBuilder(calendar: ReportCalendar(zone: zone), now: Self.now)
            let today = Self.day(of: Self.now, in: zone)
            let candidates = [today, Self.day(of: Self.now + 86_400, in: zone), Self.day(of: Self.now - 86_400, in: zone),
                              "9999-12-31", "0001-01-01", "0001-01-02", "1970-01-01", "2026-03-08", "2026-03-29", "2026-10-25", "2026-11-01"]
            for last in candidates {
                for count in [1, 2, 7] {
                    let beforeYearOne = (last == "0001-01-01" && count > 1) || (last == "0001-01-02" && count > 2)
                    guard let days = builder.calendar.days(ending: last, count: count) else {
                        #expect(beforeYearOne, "\(identifier): \(count) days ending \(last) refused")
                        continue
                    }
                    #expect(!beforeYearOne && days.count == count && days.last == last, "\(identifier): \(days)")
                    let report = try await builder.report(days: days, from: files, source: "f")
                    reports += 1
                    let notBegun = days.filter { $0 > today }
                    #expect(report.notBegun == notBegun, "\(identifier) \(days): \(report.notBegun)")
                    #expect(report.channels.allSatisfy { !notBegun.contains($0.day) }, "\(identifier) \(days)")
                    let heard = Self.day(of: Self.heardAt, in: zone)
                    #expect(report.channels.contains { $0.day == heard } == days.contains(heard), "\(identifier) \(days)")
                    _ = report.html()
                }
            }
        }
        #expect(reports > 10_000)

        // The command: a day taken in one zone and reported in another; the calendar's end.
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("records.jsonl")
        try Data(Self.recordLine.utf8).write(to: file)
        let kiritimati = Self.day(of: Date().timeIntervalSince1970, in: try #require(TimeZone(identifier: "Pacific/Kiritimati")))
        let later = try Command.run(["report", file.path, "--day", kiritimati, "--time-zone", "Pacific/Honolulu", "--format", "json"])
        #expect(later.status == 0 && later.stderr.contains("\(kiritimati) had not begun in Pacific/Honolulu"), "\(later.stderr)")
        let report = try JSONDecoder().decode(CoverageReport.self, from: Data(later.stdout.utf8))
        #expect(report.notBegun == [kiritimati] && report.channels.isEmpty)
        for arguments in [["--day", "9999-12-31"], ["--day", "9999-12-31", "--days", "400", "--format", "html"]] {
            let far = try Command.run(["report", file.path] + arguments)
            #expect(far.status == 0 && far.stderr.contains("had not begun"), "\(arguments): \(far.status) \(far.stderr)")
        }
        let early = try Command.run(["report", file.path, "--day", "0001-01-01", "--days", "2"])
        #expect(early.status == 2 && early.stderr.contains("2 days ending with 0001-01-01 would begin before 0001-01-01"), "\(early.stderr)")
        let tooLate = try Command.run(["report", file.path, "--day", "10000-01-01"])
        #expect(tooLate.status == 2 && tooLate.stderr.contains("years 1 to 9999"), "\(tooLate.stderr)")
    }

    /// Item 2: "café" posted in NFC and in NFD is one channel; a name with U+0000 is refused with
    /// 400 and nothing of its batch is kept; a page of two names that differ in their bytes but
    /// compare equal (a database from before) draws both, without a trap.
    @Test func namesAreNormalisedOnTheWayInAndThePageNeverTraps() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("records.db").path
        let collector = try CollectTests.RunningCollector(database: database)
        func batch(_ id: String, channel: String) -> String {
            #"{"batch":"\#(id)","records":[{"type":"warning","sent_at":1795000000,"channel":"\#(channel)","meter":"a","message":"m"}]}"#
        }
        let composed = try await CollectTests.post(batch("nfc", channel: "caf\u{E9}"), to: collector.url)
        let decomposed = try await CollectTests.post(batch("nfd", channel: "cafe\\u0301"), to: collector.url)
        let nul = try await CollectTests.post(batch("nul", channel: "ne\\u0000ws"), to: collector.url)
        collector.stop()
        #expect(composed.status == 200 && decomposed.status == 200, "\(composed) \(decomposed)")
        #expect(nul.status == 400 && nul.body.contains("record 0: channel holds U+0000"), "\(nul)")
        let kept = try await CollectTests.kept(in: database)
        #expect(kept.count == 2 && kept.allSatisfy { Array($0.channel!.utf8) == Array("caf\u{E9}".utf8) }, "\(kept.map(\.channel))")
        for format in ["json", "csv", "html"] {
            let report = try Command.run(["report", "--database", database, "--day", "2026-11-18", "--time-zone", "UTC", "--format", format])
            #expect(report.status == 0, "\(format): \(report.stderr)")
            if format == "json" {
                #expect(try JSONDecoder().decode(CoverageReport.self, from: Data(report.stdout.utf8)).channels.map(\.channel) == ["caf\u{E9}"])
            }
        }

        // Two spellings kept apart by a database written before the rule: two rows, no trap.
        let builder = CoverageBuilder(calendar: ReportCalendar(zone: TimeZone(identifier: "UTC")!), now: Self.now)
        let bounds = try #require(builder.calendar.bounds(of: "2026-11-18"))
        let days = ["caf\u{E9}", "cafe\u{301}"].flatMap { name in
            builder.days(of: ChannelSpan(channel: name, firstAt: Self.heardAt, lastAt: Self.heardAt, deletedAt: nil), [("2026-11-18", bounds)],
                         coverage: [:], notable: [], notableSince: 0)
        }
        let page = CoverageReport(generated: "", timeZone: "UTC", days: ["2026-11-18"], source: "t", channels: days).html()
        let heatMap = try #require(page.firstRange(of: #"<table class="heat">"#).flatMap { start in
            page[start.upperBound...].firstRange(of: "</table>").map { page[start.upperBound..<$0.lowerBound] }
        })
        #expect(heatMap.components(separatedBy: "<tr><th scope=\"row\">caf").count == 3, "both names have a row of the heat map")
    }

    /// The report's database folder: a good database, and the bytes of each file before.
    static func goodDatabase(in folder: URL) async throws -> String {
        let path = folder.appendingPathComponent("good.db").path
        let store = try await SQLiteRecordStore.open(path: path, logger: Logger(label: "test"))
        let line = Self.recordLine.trimmingCharacters(in: .newlines)
        let record = try JSONDecoder().decode(MeterRecord.self, from: Data(line.utf8))
        _ = try await store.store(CollectedBatch(id: "b", meterVersion: "t", records: [CollectedRecord(record: record, json: line)],
                                                 receivedAt: Self.heardAt, postedBy: "t"))
        await store.close()
        return path
    }

    /// Item 3: `report` writes nothing into what it reads: an empty file, another application's
    /// SQLite file, a read-only copy; `collect` takes no other application's file either; a
    /// newer schema is refused by both, an older one brought up to date by `collect` alone.
    @Test func theReportReadsWithoutWritingAndBothCommandsCheckTheSchema() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty.db").path
        try #require(FileManager.default.createFile(atPath: empty, contents: Data()))
        let other = folder.appendingPathComponent("other.db").path
        let sqlite = try Command.run([other, "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('x');"],
                                     binary: URL(fileURLWithPath: "/usr/bin/sqlite3"))
        try #require(sqlite.status == 0, "\(sqlite.stderr)")
        let good = try await Self.goodDatabase(in: folder)
        let copy = folder.appendingPathComponent("copy.db").path
        try FileManager.default.copyItem(atPath: good, toPath: copy)
        chmod(copy, 0o444)
        func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
        let before = [empty, other, copy].map(bytes)

        let emptyReport = try Command.run(["report", "--database", empty])
        #expect(emptyReport.status == 1 && emptyReport.stderr.contains("empty.db is not a collector's database (it has no tables)"),
                "\(emptyReport.stderr)")
        let otherReport = try Command.run(["report", "--database", other])
        #expect(otherReport.status == 1 && otherReport.stderr.contains("other.db is not a collector's database (its tables: people)"),
                "\(otherReport.stderr)")
        let otherCollect = try Command.run(["collect", "--database", other, "--listen", "127.0.0.1:0"])
        #expect(otherCollect.status == 1 && otherCollect.stderr.contains("the collector keeps a database of its own"), "\(otherCollect.stderr)")
        let copyReport = try Command.run(["report", "--database", copy, "--day", "2026-11-18", "--time-zone", "UTC", "--format", "json"])
        #expect(copyReport.status == 0, "\(copyReport.stderr)")
        #expect(try JSONDecoder().decode(CoverageReport.self, from: Data(copyReport.stdout.utf8)).channels.map(\.channel) == ["news"])
        #expect([empty, other, copy].map(bytes) == before, "reading wrote into what it read")

        let sql = URL(fileURLWithPath: "/usr/bin/sqlite3")
        let known = CollectorSchema.migrations(.sqlite).count
        _ = try Command.run([good, "INSERT INTO schema_version VALUES (\(CollectorSchema.migrations(.sqlite).count + 1))"], binary: sql)
        for command in [["report", "--database", good], ["collect", "--database", good, "--listen", "127.0.0.1:0"]] {
            let newer = try Command.run(command)
            #expect(newer.status == 1 && newer.stderr.contains("good.db was made by a newer id3-meter (schema version \(known + 1); this one knows up to \(known))"),
                    "\(command[0]): \(newer.stderr)")
        }
        _ = try Command.run([good, "DELETE FROM schema_version"], binary: sql)
        for command in [["report", "--database", good], ["collect", "--database", good, "--listen", "127.0.0.1:0"]] {
            let unnoted = try Command.run(command)
            #expect(unnoted.status == 1 && unnoted.stderr.contains("good.db has tables but no schema version noted"), "\(command[0]): \(unnoted.stderr)")
        }
        // The oldest schema there is: the version table alone (version 0), as the first start left it.
        let oldest = folder.appendingPathComponent("oldest.db").path
        _ = try Command.run([oldest, "CREATE TABLE schema_version (version INTEGER NOT NULL)"], binary: sql)
        let older = try Command.run(["report", "--database", oldest])
        #expect(older.status == 1 && older.stderr.contains("oldest.db has an older schema (version 0 of \(known)): run `id3-meter collect` on it once"),
                "\(older.stderr)")
        try CollectTests.RunningCollector(database: oldest).stop()
        let brought = try Command.run(["report", "--database", oldest, "--day", "2026-11-18", "--time-zone", "UTC", "--format", "json"])
        #expect(brought.status == 0, "collect brought the schema up to date: \(brought.stderr)")
    }

    /// Item 4: `-o` replaces the file it names at once: through a link the target (the link
    /// stays), a dangling link's target made; a FIFO or a device refused and left as it was; a
    /// path ending in `/` a usage error that makes nothing; an existing file's permissions kept.
    @Test func theOutputIsTheFileItNamesReplacedWhole() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let records = folder.appendingPathComponent("records.jsonl")
        try Data(Self.recordLine.utf8).write(to: records)
        func report(_ output: String) throws -> Command.Result {
            try Command.run(["report", records.path, "--day", "2026-11-18", "--time-zone", "UTC", "--format", "json", "-o", output])
        }
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        let files = FileManager.default
        try "old".write(toFile: path("target.json"), atomically: true, encoding: .utf8)
        chmod(path("target.json"), 0o600)
        try files.createSymbolicLink(atPath: path("link.json"), withDestinationPath: "target.json")
        #expect(try report(path("link.json")).status == 0)
        #expect(try files.destinationOfSymbolicLink(atPath: path("link.json")) == "target.json", "the link stays a link")
        let written = try JSONDecoder().decode(CoverageReport.self, from: try Data(contentsOf: URL(fileURLWithPath: path("target.json"))))
        #expect(written.channels.map(\.channel) == ["news"])
        #expect((try files.attributesOfItem(atPath: path("target.json"))[.posixPermissions] as? Int) == 0o600)

        try files.createSymbolicLink(atPath: path("dangling.json"), withDestinationPath: "made.json")
        #expect(try report(path("dangling.json")).status == 0 && files.fileExists(atPath: path("made.json")))

        #expect(mkfifo(path("fifo"), 0o644) == 0)
        let fifo = try report(path("fifo"))
        #expect(fifo.status == 1 && fifo.stderr.contains("fifo is a FIFO, not a regular file"), "\(fifo.stderr)")
        var status = stat()
        #expect(lstat(path("fifo"), &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "the FIFO is still one")
        let device = try report("/dev/full")
        #expect(device.status == 1 && device.stderr.contains("/dev/full is a device"), "\(device.stderr)")
        #expect(stat("/dev/full", &status) == 0 && status.st_mode & S_IFMT == S_IFCHR)

        try files.createDirectory(atPath: path("dir"), withIntermediateDirectories: false)
        let slash = try report(folder.path + "/dir/sub/")
        #expect(slash.status == 2 && slash.stderr.contains("names a folder, not a file"), "\(slash.stderr)")
        #expect(try files.contentsOfDirectory(atPath: path("dir")).isEmpty)
        #expect(try files.contentsOfDirectory(atPath: folder.path).allSatisfy { !$0.hasPrefix(".") }, "no temporary file left")
    }

    /// A collector's peak and present memory, from the kernel.
    static func memory(of process: Process) -> (peak: Int, now: Int) {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        func kilobytes(_ key: String) -> Int {
            status.split(separator: "\n").first { $0.hasPrefix(key) }.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        }
        return (kilobytes("VmHWM:") * 1_024, kilobytes("VmRSS:") * 1_024)
    }

    /// `text` sent on a new connection to `port`, then the answer read to the connection's end:
    /// its status (0 when closed unanswered), headers (names lowercased) and body.
    static func exchange(_ bytes: [UInt8], port: UInt16, wait seconds: Int = 10) -> (status: Int, headers: [String: String], body: String) {
        let socket = APILimitsTests.connection(to: port)
        defer { close(socket) }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while case let count = recv(socket, &buffer, buffer.count, 0), count > 0 { received += buffer[..<count] }
        let text = String(decoding: received, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return (0, [:], text) }
        let lines = text[..<split.lowerBound].split(separator: "\r\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        let headers = Dictionary(lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }, uniquingKeysWith: { $1 })
        return (status, headers, String(text[split.upperBound...]))
    }

    /// `body` posted to `/records` with `headers` (whole lines, as bytes: a test may send Latin-1).
    static func post(_ body: [UInt8], port: UInt16, headers: [UInt8] = [], wait: Int = 10) -> (status: Int, headers: [String: String], body: String) {
        exchange(Array("POST /records HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(body.count)\r\n".utf8) + headers
                 + Array("\r\n".utf8) + body, port: port, wait: wait)
    }

    /// A 16 MB batch of the smallest records a meter could send (about 490,000), and how many.
    static func tinyBatch(_ id: String) -> (body: [UInt8], records: Int) {
        var body = Array(#"{"batch":"\#(id)","meter_version":"t","records":["#.utf8)
        var index = 0
        while body.count < (16 << 20) - 64 {
            body += Array(#"{"type":"x","sent_at":\#(1_795_000_000 + index % 100_000)},"#.utf8)
            index += 1
        }
        body.removeLast()
        return (body + Array("]}".utf8), index)
    }

    /// The records an SQLite database holds, counted by SQLite's own shell.
    static func count(in database: String) throws -> Int? {
        Int(try Command.run([database, "SELECT COUNT(*) FROM records"], binary: URL(fileURLWithPath: "/usr/bin/sqlite3"))
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Item 5: three 16 MB batches of tiny records posted at once are stored one after the
    /// other in under 512 MB (one took 2.2 GB before, three 4.4 GB), most of it given back, every
    /// record once; `/healthz` meanwhile is answered at once (it waited 20 s before).
    @Test func bigBatchesAreStoredInBoundedMemory() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("records.db").path
        let collector = try CollectTests.RunningCollector(database: database)
        defer { collector.stop() }
        let port = UInt16(collector.port)
        let answers = Mutex<[Int]>([])
        let posting = DispatchGroup()
        var tinyRecords = 0
        for id in ["big-1", "big-2", "big-3"] {
            let (body, records) = Self.tinyBatch(id)
            tinyRecords += records
            DispatchQueue.global().async(group: posting) {
                let status = Self.post(body, port: port, wait: 200).status
                answers.withLock { $0.append(status) }
            }
        }
        var probes: [Double] = []
        while posting.wait(timeout: .now() + 0.2) == .timedOut {
            let asked = Date()
            let probe = Self.exchange(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), port: port, wait: 5)
            probes.append(Date().timeIntervalSince(asked))
            #expect(probe.status == 200, "\(probe)")
        }
        let memory = Self.memory(of: collector.process)
        print("three 16 MB batches (\(tinyRecords) records): peak \(memory.peak >> 20) MB, after \(memory.now >> 20) MB; "
              + "\(probes.count) probes meanwhile, the slowest \(probes.max() ?? 0) s")
        #expect(answers.withLock { $0 } == [200, 200, 200])
        #expect(memory.peak < 512 << 20)
        #expect(memory.now < 256 << 20)
        #expect(probes.count >= 10 && probes.allSatisfy { $0 < 2 }, "\(probes)")
        collector.stop()
        #expect(try Self.count(in: database) == tinyRecords)
    }

    /// Whether the server has closed `socket` (its reads end).
    static func isClosed(_ socket: Int32) -> Bool {
        var byte: UInt8 = 0
        return recv(socket, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK)) == 0
    }

    /// Item 6: a collector capped at 20 connections, each holding a post it has not finished
    /// reading (a request begun is never closed to make room): every probe, each on a connection
    /// of its own, is answered from the places kept for them; another post there is answered 503
    /// with Retry-After, in words, not closed unanswered; the 20 posts, once sent whole, are
    /// answered and kept. Each post is known to have begun (`id3meter_api_requests_in_progress`,
    /// asked on a connection of its own) before the next: the 20th, asked about from a 21st
    /// connection, may be closed to make room if the server had not read its head yet, and is
    /// then begun again.
    @Test func theProbesKeepTheirPlaceWhenPostsHoldEveryOther() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("records.db").path
        let collector = try CollectTests.RunningCollector(database: database, extra: ["--api-max-connections", "20", "--api-timeout", "60"])
        defer { collector.stop() }
        let port = UInt16(collector.port)
        let bodies = (0..<20).map { #"{"batch":"held-\#($0)","records":[{"type":"warning","sent_at":1795000000,"channel":"c\#($0)","message":"m"}]}"# }
        func inProgress() -> Int {
            let page = Self.exchange(Array("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), port: port)
            return Int(ServeCommandTests.samples(page.body)["id3meter_api_requests_in_progress"] ?? -1)
        }
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        let started = Date()
        while held.count < 20 {
            guard Date().timeIntervalSince(started) < 60 else { throw TestFailure("the posts did not begin in a minute") }
            let socket = APILimitsTests.connection(to: port)
            let body = bodies[held.count]
            _ = APILimitsTests.send("POST /records HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body.prefix(10))", on: socket)
            while inProgress() < held.count + 2, !Self.isClosed(socket) { usleep(20_000) }
            if Self.isClosed(socket) { close(socket) } else { held.append(socket) }
        }
        var probes: [Double] = []
        for path in Array(repeating: "/healthz", count: 8) + ["/readyz", "/metrics"] {
            let asked = Date()
            let probe = Self.exchange(Array("GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), port: port, wait: 5)
            probes.append(Date().timeIntervalSince(asked))
            #expect(probe.status == 200, "\(path): \(probe)")
        }
        #expect(probes.allSatisfy { $0 < 2 }, "\(probes)")
        let extra = Self.post(Array(#"{"batch":"extra","records":[]}"#.utf8), port: port)
        #expect(extra.status == 503 && extra.headers["retry-after"] == "1" && extra.body.contains("kept for /healthz, /readyz and /metrics"),
                "\(extra)")
        var statuses: [Int] = []
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        for (socket, body) in zip(held, bodies) {
            _ = APILimitsTests.send(String(body.dropFirst(10)), on: socket)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var buffer = [UInt8](repeating: 0, count: 4_096)
            let count = recv(socket, &buffer, buffer.count, 0)
            statuses.append(count > 12 ? Int(String(decoding: buffer[9..<12], as: UTF8.self)) ?? 0 : 0)
        }
        #expect(statuses == Array(repeating: 200, count: 20), "\(statuses)")
        collector.stop()
        #expect(try Self.count(in: database) == 20)
    }

    /// Item 7: a token followed by more bytes (256 and 512: the low byte of the length's
    /// difference is 0) is not the token; a post with it is refused.
    @Test func aTokenIsEqualOnlyInEveryByteAndInLength() async throws {
        let secret = "0123456789abcdef0123"
        let tokens = try APITokens("meter write \(secret)\n", source: "t")
        #expect(tokens.token(for: Array(secret.utf8))?.name == "meter")
        for extra in [1, 256, 512, 65_536] {
            #expect(tokens.token(for: Array(secret.utf8) + Array(repeating: UInt8(ascii: "x"), count: extra)) == nil, "\(extra) bytes more")
        }
        #expect(tokens.token(for: Array(secret.utf8.dropLast())) == nil)
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("tokens")
        try "meter write \(secret)\n".write(to: file, atomically: true, encoding: .utf8)
        let collector = try CollectTests.RunningCollector(database: folder.appendingPathComponent("r.db").path, extra: ["--api-tokens", file.path])
        defer { collector.stop() }
        let body = Array(#"{"batch":"b","records":[]}"#.utf8)
        let longer = Self.post(body, port: UInt16(collector.port), headers: Array("Authorization: Bearer \(secret)\(String(repeating: "x", count: 256))\r\n".utf8))
        #expect(longer.status == 401, "\(longer)")
        #expect(Self.post(body, port: UInt16(collector.port), headers: Array("Authorization: Bearer \(secret)\r\n".utf8)).status == 200)
    }

    /// Item 8: the rule that lets a listener go without tokens is on addresses: a name that
    /// starts "127." is resolved like any other (and this one does not resolve), `localhost` is
    /// loopback for what it resolves to.
    @Test func theLoopbackRuleIsOnAddressesNotNames() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("r.db").path
        for listen in ["127.attacker.example:0", "0.0.0.0:0", "127.0.0.1.nip.io:0"] {
            let refused = try Command.run(["collect", "--database", database, "--listen", listen])
            #expect(refused.status == 1 && refused.stderr.contains("--listen \(listen) would let anyone who reaches it post records"),
                    "\(listen): \(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: database), "nothing opened for a refused listener")
        let (process, _, stderr) = try Command.launch(["collect", "--database", database, "--listen", "localhost:0"])
        defer { process.terminate(); process.waitUntilExit() }
        var log = ""
        while !log.contains("collecting on"), case let chunk = stderr.fileHandleForReading.availableData, !chunk.isEmpty {
            log += String(decoding: chunk, as: UTF8.self)
        }
        #expect(log.contains("collecting on http://localhost:"), "\(log)")
    }

    /// Item 9: the HTTP edges, each answered in words: another method 405 with `Allow`, `HEAD`
    /// for a probe, a transfer coding other than chunked 400 (not "split it"), a head past 16 KB
    /// 431, an Idempotency-Key that is not UTF-8 said so, a number that does not fit its field
    /// named; a port in use is said without a false word about retention.
    @Test func theHTTPEdgesAreAnsweredInWords() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let collector = try CollectTests.RunningCollector(database: folder.appendingPathComponent("r.db").path)
        defer { collector.stop() }
        let port = UInt16(collector.port)
        func ask(_ head: String) -> (status: Int, headers: [String: String], body: String) {
            Self.exchange(Array("\(head)\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), port: port)
        }
        for (request, allow) in [("PUT /records", "POST"), ("DELETE /", "POST"), ("OPTIONS /healthz", "GET, HEAD"), ("POST /metrics", "GET, HEAD")] {
            let answer = ask("\(request) HTTP/1.1\r\nContent-Length: 0")
            #expect(answer.status == 405 && answer.headers["allow"] == allow, "\(request): \(answer)")
        }
        #expect(ask("GET /nothing HTTP/1.1").status == 404)
        for path in ["/healthz", "/readyz", "/metrics"] {
            let head = ask("HEAD \(path) HTTP/1.1")
            #expect(head.status == 200 && head.body.isEmpty && Int(head.headers["content-length"] ?? "") ?? 0 > 0, "\(path): \(head)")
        }
        let coded = Self.exchange(Array("POST /records HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc".utf8), port: port)
        #expect(coded.status == 400 && !coded.body.contains("split it"), "\(coded)")
        let big = ask("GET /healthz HTTP/1.1\r\nX-Big: \(String(repeating: "a", count: 20_000))")
        #expect(big.status == 431 && big.body.contains("over 16384 bytes"), "\(big)")
        let batch = Array(#"{"batch":"caf\#u{E9}","records":[]}"#.utf8)
        let latin1 = Self.post(batch, port: port, headers: Array("Idempotency-Key: caf".utf8) + [0xE9] + Array("\r\n".utf8))
        #expect(latin1.status == 400 && latin1.body.contains("Idempotency-Key is not UTF-8"), "\(latin1)")
        #expect(Self.post(batch, port: port, headers: Array("Idempotency-Key: caf\u{E9}\r\n".utf8)).status == 200, "the key as UTF-8 matches")
        for (record, words) in [(#""pts":1.5"#, "record 0: pts: 1.5 does not fit the field"), (#""pts":"7""#, "record 0: pts is not an integer")] {
            let body = Array(#"{"batch":"n","records":[{"type":"send_id3","payload":"x","sent_at":1795000000,\#(record)}]}"#.utf8)
            let answer = Self.post(body, port: port)
            #expect(answer.status == 400 && answer.body.contains(words) && !answer.body.contains("NSCocoaErrorDomain"), "\(answer)")
        }
        let inUse = try Command.run(["collect", "--database", folder.appendingPathComponent("s.db").path, "--listen", "127.0.0.1:\(port)"])
        #expect(inUse.status == 1 && inUse.stderr.contains("cannot collect on 127.0.0.1:\(port)") && !inUse.stderr.contains("CancellationError"),
                "\(inUse.stderr)")
    }
}
