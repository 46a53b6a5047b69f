import Foundation
import Logging
import Synchronization
import Testing
import ID3MeterReport
import SampleGenerator
@testable import ID3Meter
@testable import ID3MeterServe

/// The collector folds each channel's minutes into hours once an hour is over; the report takes
/// a stored hour where it is wholly on air and no batch has changed it since. The report must be
/// the one its minutes give, whatever the collector folded, marked or purged.
@Suite("report: the collector's folded hours", .serialized, .timeLimit(.minutes(4)))
struct CoverageHourTests {
    /// 2026-11-17T00:00:00Z: the middle day of three the records touch.
    static let day = 1_794_873_600.0
    static let days = ["2026-11-16", "2026-11-17", "2026-11-18"]
    static let end = day + 86_400 + 1_800

    @Test func anHoursTextReadsBackAsItWas() {
        var random = SeededRandom(seed: 58)
        func time() -> Double { 1_794_873_600 + Double(random.next() % 3_600_000) / 1_000 }
        let names = ["a", "meter two", "m:3", "", "ünï 9:", "1:x 2"]
        var all: [Int: CoverageHour] = [:]
        for index in 0..<2_000 {
            var hour = CoverageHour(hour: 498_576 + index)
            hour.credited = random.next() & (1 << 60 - 1)
            (hour.tags.creditable, hour.tags.info) = (Int(random.next() % 900), Int(random.next() % 20))
            (hour.tags.placeholder, hour.tags.invalid) = (Int(random.next() % 5), Int(random.next() % 3))
            hour.covered = (0..<Int(random.next() % 4)).map { _ in time() }.sorted().map { $0...($0 + Double(random.next() % 40)) }
            if random.next() % 3 != 0 {
                hour.info = CoverageHour.InfoStretch(first: time(), last: time(), longest: Double(random.next() % 4_000) / 7, overLimit: Int(random.next() % 9))
            }
            for name in names.sorted() where random.next() % 2 == 0 {
                hour.meters.append(CoverageHour.MeterHour(meter: name, credited: random.next() & (1 << 60 - 1), creditable: Int(random.next() % 900)))
            }
            let text = hour.text
            #expect(CoverageHour(hour: hour.hour, text: text) == hour, "\(text)")
            // Cut before its last word, or with a word added, a text is not an hour.
            let lastWord = text.utf8.lastIndex(of: UInt8(ascii: " ")).map { text.utf8.distance(from: text.utf8.startIndex, to: $0) } ?? 0
            for cut in stride(from: 0, to: lastWord, by: 7) {
                #expect(CoverageHour(hour: hour.hour, text: String(decoding: text.utf8.prefix(cut), as: UTF8.self)) == nil, "\(text) cut at \(cut)")
            }
            #expect(CoverageHour(hour: hour.hour, text: text + " 1") == nil)
            if hour.meters.count > 1 {
                var swapped = hour
                swapped.meters.reverse()
                #expect(CoverageHour(hour: hour.hour, text: swapped.text) == nil, "meters out of order")
            }
            all[hour.hour] = hour
        }
        // As the database hands a channel's hours over: one text, a line an hour.
        #expect(CoverageHour.lines(all.values.map { "\($0.hour) \($0.text)" }.joined(separator: "\n")) == all)
        #expect(CoverageHour.lines("498576 " + all[498_576]!.text + "\n498577 1 2") == nil)
    }

    /// A report writes every time of a gap in the zone: the arithmetic it does on the
    /// coverage's times must write what Foundation's ISO 8601 formatter writes, in zones off the
    /// hour, south of the equator and across their clock changes.
    @Test func timesAreWrittenAsFoundationsFormatterWritesThem() throws {
        var random = SeededRandom(seed: 60)
        for name in ["UTC", "Europe/Paris", "America/St_Johns", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham", "America/Los_Angeles"] {
            let zone = try #require(TimeZone(identifier: name))
            let calendar = ReportCalendar(zone: zone)
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = zone
            for _ in 0..<3_000 {
                let time = Double(random.next() % 4_102_444_800) + Double(random.next() % 1_000) / 1_000
                let expected = formatter.string(from: Date(timeIntervalSince1970: time.rounded(.down)))
                #expect(calendar.time(time) == (expected.hasSuffix("Z") ? expected.dropLast() + "+00:00" : expected), "\(name) \(time)")
            }
        }
    }

    /// The strip, minute by minute, is what each minute's hour says of it: credited, on air and
    /// not, or off air; days of any length and offset (zones off the hour, clock changes), air
    /// beginning and ending anywhere.
    @Test func theStripIsEachMinuteAsItsHourSays() {
        var random = SeededRandom(seed: 61)
        for _ in 0..<3_000 {
            let firstMinute = 29_846_880 + Int(random.next() % 600) - 300
            let dayMinutes = [1_440, 1_380, 1_500, 7, 61][Int(random.next() % 5)]
            let dayStart = Double(firstMinute * 60)
            let from = dayStart + Double(random.next() % UInt64(dayMinutes * 60))
            let to = min(dayStart + Double(dayMinutes * 60), from + Double(random.next() % UInt64(dayMinutes * 60)) + 1)
            let firstHour = CoverageHour.hour(of: firstMinute - 1)
            let hours = (firstHour...CoverageHour.hour(of: firstMinute + dayMinutes)).map { hour in
                var folded = CoverageHour(hour: hour)
                // Whole hours alike most often, as a line-up's are; mixed ones too.
                folded.credited = [0, (1 << 60) - 1, random.next() & ((1 << 60) - 1)][Int(random.next() % 3)]
                return folded
            }
            let input = ChannelDayInput(channel: "c", day: "d", dayStart: dayStart, dayEnd: dayStart + Double(dayMinutes * 60), onAir: from..<to,
                                        hours: hours, minutes: [:], notable: [], notableSince: 0,
                                        alerts: AlertSpans.asOf([], since: 0, ends: [.infinity])[0])
            let day = ChannelDay(input) { String($0) }
            let air = ChannelDay.airMinutes(from..<to)
            let expected: [ChannelDay.Run.State] = (0..<dayMinutes).map { offset in
                let minute = firstMinute + offset
                guard air.contains(minute) else { return .offAir }
                let hour = hours.first { $0.hour == CoverageHour.hour(of: minute) }!
                return hour.credited >> UInt64(minute - hour.hour * 60) & 1 == 1 ? .credited : .uncredited
            }
            let drawn = day.strip.flatMap { Array(repeating: $0.state, count: $0.minutes) }
            #expect(drawn == expected && zip(day.strip, day.strip.dropFirst()).allSatisfy { $0.state != $1.state && $0.minute + $0.minutes == $1.minute },
                    "\(firstMinute) \(dayMinutes) \(from)..<\(to): \(day.strip)")
        }
    }

    /// The collector's intake refuses times outside 1970 to 2100; a library's batch may hold
    /// any: stored and folded without a trap.
    @Test func aLibrarysBatchMayHoldAnyTime() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try await SQLiteRecordStore.open(path: folder.appendingPathComponent("far.db").path, logger: Logger(label: "test"))
        var factory = NielsenTagFactory(seed: 65)
        let records = [1e300, -1e300, 1.5e9].map { time in
            Self.record(.delivery(factory.owner(secondsIntoDay: 5), context: TagContext(pts: 1, origin: TagOrigin(source: "s"), programDateTime: nil),
                                  at: Date(timeIntervalSince1970: time)), channel: "far", meter: "n1")
        }
        for received in [1e300, -1e300] {
            _ = try await store.store(CollectedBatch(id: "far \(received)", meterVersion: "t", records: records, receivedAt: received, postedBy: "t"))
        }
        _ = try await store.foldHours(now: 1e300)
        _ = try await store.foldHours(now: -1e300)
        #expect(try await store.records(channel: "far", from: -.infinity, to: .infinity).count == 3)
        await store.close()
    }

    @Test func onSQLite() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await foldedHoursGiveTheMinutesReport(try await SQLiteRecordStore.open(path: folder.appendingPathComponent("hours.db").path,
                                                                                   logger: Logger(label: "test")))
    }

    @Test(.enabled(if: TestPostgres.requested != nil, Comment(rawValue: TestPostgres.why)))
    func onPostgreSQL() async throws {
        try await foldedHoursGiveTheMinutesReport(try await PostgresRecordStore.open(url: try TestPostgres.empty(), logger: Logger(label: "test")))
    }

    /// A batch with late hours holds the fold's lock shared for its transaction; a fold waits
    /// for it, but not for ever (late batches queue behind a waiting fold): it gives up after
    /// its wait, saying so, and folds once the batch is done.
    @Test(.enabled(if: TestPostgres.requested != nil, Comment(rawValue: TestPostgres.why)))
    func aFoldGivesUpOnALockHeldTooLong() async throws {
        let url = try TestPostgres.empty()
        let store = try await PostgresRecordStore.open(url: url, lockWait: .seconds(1), logger: Logger(label: "test"))
        for batch in Self.batches() { _ = try await store.store(batch) }
        // Another session, as a batch stuck in its transaction would be.
        let held = try HeldLock(url: url, key: CollectorSchema.foldLock)
        let clock = ContinuousClock()
        let start = clock.now
        let failure = await #expect(throws: StoreError.self) { _ = try await store.foldHours(now: Self.end + 10_800) }
        let waited = clock.now - start
        #expect(waited >= .milliseconds(950) && waited < .seconds(6), "gave up after \(waited)")
        #expect(failure?.description.contains("lock timeout") == true, "\(failure.map(\.description) ?? "")")
        #expect(try held.release())
        #expect(try await store.foldHours(now: Self.end + 10_800) > 3 * 20, "folded once the lock was let go")
        await store.close()
    }

    /// Three channels over 26 hours across three days from two meters, batches posted as they
    /// would be live; the reports with the stored hours and without them, after folding, after
    /// a late batch into a folded hour, after folding it again, and after a purge.
    func foldedHoursGiveTheMinutesReport(_ store: some RecordStore & CoverageReading) async throws {
        for batch in Self.batches() { _ = try await store.store(batch) }
        let builder = CoverageBuilder(calendar: ReportCalendar(zone: TimeZone(identifier: "UTC")!), now: Self.end + 10_800)
        func reports() async throws -> (minutes: CoverageReport, hours: CoverageReport, read: (minutes: Int, hours: Int)) {
            let (minutes, hours) = (Tallied(base: store, stored: false), Tallied(base: store, stored: true))
            let a = try await builder.report(days: Self.days, from: minutes, source: "t")
            let b = try await builder.report(days: Self.days, from: hours, source: "t")
            return (a, b, (minutes.read, hours.read))
        }

        let before = try await reports()
        #expect(before.hours.channels == before.minutes.channels && before.read.hours == before.read.minutes, "nothing folded yet")
        let day = try #require(before.minutes.channels.first { $0.channel == "a1" && $0.day == "2026-11-17" })
        // What the records were made to hold: gaps the meters both missed, minutes one alone
        // credited, INFO and placeholder tags, a channel that came on air and stopped mid-hour.
        #expect(!day.gaps.isEmpty && day.meters.count == 2 && day.meters.allSatisfy { $0.soleMinutes > 0 } && day.tags.info > 200
                && day.tags.placeholder > 0, "\(day.gaps.count) gaps, \(day.meters), \(day.tags)")
        let late = try #require(before.minutes.channels.first { $0.channel == "c3" && $0.day == "2026-11-17" })
        #expect(late.onAirFrom?.hasPrefix("2026-11-17T03:2") == true && late.gaps.last.map { $0.seconds > 3 * 3_600 } == true,
                "\(late.onAirFrom ?? "") \(late.gaps.last.map(\.seconds) ?? 0)")

        let folded = try await store.foldHours(now: Self.end + 10_800)
        #expect(folded > 3 * 20, "\(folded) hours folded")
        #expect(try await store.foldHours(now: Self.end + 10_800) == 0, "a second fold finds nothing left")
        let after = try await reports()
        #expect(after.minutes.channels == before.minutes.channels)
        #expect(after.hours.channels == after.minutes.channels, "\(Self.difference(after.hours, after.minutes))")
        #expect(after.read.hours * 10 < after.read.minutes, "minute rows read: \(after.read)")
        // The JSON form, its days encoded in parts on every core: the encoder's bytes of the whole.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var many = after.hours
        // Fields the line-up's days leave empty, and names a writer must escape.
        let checks = try JSONDecoder().decode([ChannelDay.FailingCheck].self, from: Data(#"""
            [{"check": "payload_length", "seconds": 5}, {"check": "renditions", "detail": "the \"audio\" one/é\n\u0001", "seconds": 7}]
            """#.utf8))
        let days = after.hours.channels + after.hours.channels.prefix(2).map { day in
            var day = day
            (day.failingChecks, day.channel, day.onAirFrom) = (checks, "news \"/\\ ✓\t", nil)
            day.info.longestIntervalSeconds = nil
            return day
        }
        for count in [0, 1, days.count, 700, 5_000] {
            many.channels = (0..<count).map { var day = days[$0 % days.count]; day.channel += "-\($0)"; return day }
            #expect(many.json() == (try encoder.encode(many)), "\(count) days")
        }

        // A meter's spool drained hours late: tags into the first gap of a1 that day.
        let gap = try #require(day.gaps.first)
        var factory = NielsenTagFactory(seed: 59)
        let tags = stride(from: gap.start + 5, to: gap.start + Double(gap.seconds) - 5, by: 10).map { time in
            Self.record(.delivery(factory.owner(secondsIntoDay: Int(time) % 86_400), context: TagContext(pts: 1, origin: TagOrigin(source: "s"), programDateTime: nil),
                                  at: Date(timeIntervalSince1970: time)), channel: "a1", meter: "n2")
        }
        _ = try await store.store(CollectedBatch(id: "late", meterVersion: "t", records: tags, receivedAt: Self.end + 10_800, postedBy: "t"))
        let hour = CoverageHour.hour(of: CoverageMinute.minute(of: gap.start))
        #expect(try await store.hours(channel: "a1", hours: hour..<hour + 1).isEmpty, "the late batch's hour is marked")
        let marked = try await reports()
        #expect(marked.hours.channels == marked.minutes.channels, "\(Self.difference(marked.hours, marked.minutes))")
        #expect(marked.minutes.channels != after.minutes.channels, "the late tags changed the day")
        #expect(try await store.foldHours(now: Self.end + 10_800) >= 1)
        #expect(try await store.hours(channel: "a1", hours: hour..<hour + 1).count == 1, "folded again")
        let refolded = try await reports()
        #expect(refolded.hours.channels == marked.minutes.channels, "\(Self.difference(refolded.hours, marked.minutes))")

        // A purge that cuts into an hour: what is left of it is read from its minutes.
        _ = try await store.purge(before: Self.day + 6 * 3_600 + 1_830)
        let purged = try await reports()
        #expect(purged.hours.channels == purged.minutes.channels, "\(Self.difference(purged.hours, purged.minutes))")
        #expect(purged.minutes.channels != refolded.minutes.channels)
        await store.close()
    }

    /// The batches of three channels' 26 hours, each meter's posted in time order, 1,000 records
    /// at a time, each received two seconds after its last record was made.
    static func batches() -> [CollectedBatch] {
        var random = SeededRandom(seed: 57)
        var factory = NielsenTagFactory(seed: 57)
        func uniform(_ range: ClosedRange<Double>) -> Double {
            range.lowerBound + Double(random.next() % 1_000_000) / 1_000_000 * (range.upperBound - range.lowerBound)
        }
        let start = day - 5_400
        var byMeter: [String: [CollectedRecord]] = [:]
        let channels: [(name: String, from: Double, to: Double, meters: [String])] = [
            ("a1", start, end, ["n1", "n2"]), ("b2", start, end, ["n1", "n2"]),
            ("c3", day + 3 * 3_600 + 1_200, day + 20 * 3_600 + 610, ["n1"]),
        ]
        for channel in channels {
            // Outages: both meters' (a gap), and each meter's own (minutes the other alone credits).
            var outages: [String: [ClosedRange<Double>]] = [:]
            for _ in 0..<8 {
                let from = uniform(channel.from...channel.to)
                outages["both", default: []].append(from...(from + uniform(35...1_500)))
                for meter in channel.meters {
                    let own = uniform(channel.from...channel.to)
                    outages[meter, default: []].append(own...(own + uniform(60...3_000)))
                }
            }
            var time = channel.from, index = 0
            while time < channel.to {
                // An INFO tag every 20th, beside the DATA tag; a few DATA tags with the placeholder CID.
                var payloads = [factory.owner(secondsIntoDay: Int(time) % 86_400, placeholder: index % 500 < 3)]
                if index % 20 == 0 { payloads.append(factory.infoOwner()) }
                for meter in channel.meters where !(outages["both", default: []] + outages[meter, default: []]).contains(where: { $0.contains(time) }) {
                    for (offset, payload) in payloads.enumerated() {
                        let at = time + uniform(0...0.4) + Double(offset)
                        byMeter[meter, default: []].append(record(.delivery(payload, context: TagContext(pts: Int64(index), origin: TagOrigin(source: "s"), programDateTime: nil),
                                                                            at: Date(timeIntervalSince1970: at)), channel: channel.name, meter: meter))
                    }
                }
                time += uniform(8...24)
                index += 1
            }
            // A no_tags alert over each gap both meters share, from the first meter.
            for outage in outages["both", default: []] {
                for (active, at) in [(true, outage.lowerBound + 30), (false, outage.upperBound)] {
                    byMeter[channel.meters[0], default: []].append(json(#"{"type":"alert","sent_at":\#(at),"channel":"\#(channel.name)","meter":"\#(channel.meters[0])","alert":"no_tags","active":\#(active)}"#))
                }
            }
        }
        return byMeter.sorted { $0.key < $1.key }.flatMap { meter, records in
            let ordered = records.sorted { $0.record.sentAt < $1.record.sentAt }
            return stride(from: 0, to: ordered.count, by: 1_000).map { first in
                let part = Array(ordered[first..<min(first + 1_000, ordered.count)])
                return CollectedBatch(id: "\(meter)-\(first)", meterVersion: "t", records: part, receivedAt: part.last!.record.sentAt + 2, postedBy: "t")
            }
        }
    }

    static func record(_ record: MeterRecord, channel: String, meter: String) -> CollectedRecord {
        var record = record
        (record.channel, record.meter) = (channel, meter)
        return CollectedRecord(record: record, json: String(decoding: record.jsonLine, as: UTF8.self))
    }

    static func json(_ text: String) -> CollectedRecord {
        CollectedRecord(record: try! JSONDecoder().decode(MeterRecord.self, from: Data(text.utf8)), json: text)
    }

    /// The first channel-day two reports disagree on, for a failure's message.
    static func difference(_ a: CoverageReport, _ b: CoverageReport) -> String {
        guard let (x, y) = zip(a.channels, b.channels).first(where: { $0 != $1 }) else { return "\(a.channels.count) vs \(b.channels.count) days" }
        return "\(x)\n  vs\n\(y)"
    }

    /// A report's reading, with the stored hours or without them, counting the minute rows it reads.
    struct Tallied<Base: CoverageReading>: CoverageReading {
        let base: Base
        let stored: Bool
        private let minutes = Tally()

        init(base: Base, stored: Bool) { (self.base, self.stored) = (base, stored) }

        var read: Int { minutes.value.withLock { $0 } }

        func channels() async throws(StoreError) -> [ChannelSpan] { try await base.channels() }

        func coverage(channel: String, minutes ranges: [Range<Int>]) async throws(StoreError) -> [String: [CoverageMinute]] {
            let found = try await base.coverage(channel: channel, minutes: ranges)
            minutes.value.withLock { $0 += found.values.reduce(0) { $0 + $1.count } }
            return found
        }

        func hours(channel: String, hours: Range<Int>) async throws(StoreError) -> [Int: CoverageHour] {
            stored ? try await base.hours(channel: channel, hours: hours) : [:]
        }

        func notable(channel: String, from: Double, to: Double) async throws(StoreError) -> [MeterRecord] {
            try await base.notable(channel: channel, from: from, to: to)
        }
    }

    final class Tally: Sendable {
        let value = Mutex(0)
    }
}
