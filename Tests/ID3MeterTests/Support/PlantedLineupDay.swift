import Foundation
@testable import ID3MeterCore
import ID3MeterReport
import SampleGenerator

/// A line-up's day as its meters would record it, with gaps planted where the writer chose and
/// what the records say of each: the report's ground truth. Tags every 10 s (at :05, :15...),
/// INFO tags every 5 minutes; 2026-11-20 in Europe/Paris.
///
/// - `news` (meter a): a gap for each cause the report names, and QA checks failing.
/// - `sport` (meters a and b): a's half hour without tags that b covers (no gap), one gap both
///   missed during a failover, and its deletion from the line-up at 22:00.
/// - `late`: first heard of at 12:00:05, so on air from then.
struct PlantedLineupDay: Sendable {
    /// The words of the day's last audit that found renditions at fault.
    static let renditionsDiffer = "renditions differ: https://origin/news/v1.m3u8: no Nielsen tag at all | https://origin/news/v2.m3u8: tags 0.500 s after the other renditions'"

    static let zone = "Europe/Paris"
    static let day = "2026-11-20"
    /// 2026-11-20T00:00:00+01:00.
    static let start = 1_795_129_200.0

    /// A planted gap: from the last creditable tag before it to the first after it (or the day's
    /// end), and the cause the records give first.
    struct Gap: Equatable {
        var from: Double
        var to: Double
        var cause: GapCause
    }

    private(set) var records: [MeterRecord] = []
    /// Each channel's creditable tag times, any meter.
    private(set) var creditable: [String: [Double]] = [:]
    /// Each channel's INFO tag times, any meter (one meter's copy of another's time counted once).
    private(set) var info: [String: [Double]] = [:]
    private(set) var plantedCauses: [String: [(window: Range<Double>, cause: GapCause)]] = [:]

    /// `hh:mm:ss` of the day as Unix seconds.
    static func at(_ clock: String) -> Double {
        let parts = clock.split(separator: ":").map { Double($0)! }
        return start + parts[0] * 3_600 + parts[1] * 60 + (parts.count > 2 ? parts[2] : 0)
    }

    static func window(_ from: String, _ to: String) -> Range<Double> { at(from)..<at(to) }

    init() {
        var factory = NielsenTagFactory(seed: 46)
        // news: one meter, a gap per cause.
        let news: [(Range<Double>, GapCause)] = [
            (Self.window("02:00", "02:10"), .streamUnreadable), (Self.window("05:00", "05:03:20"), .onlyUncreditableTags),
            (Self.window("08:00", "08:01"), .silent), (Self.window("11:00", "11:05"), .noTags),
            (Self.window("14:00", "14:02:30"), .meterRestart), (Self.window("17:00", "17:00:45"), .recordsLost),
            (Self.window("23:59", "24:00"), .silent),
        ]
        plantedCauses["news"] = news.map { ($0.0, $0.1) }
        let placeholders = Self.window("05:00", "05:03:20")
        tags("news", meter: "a", factory: &factory, from: Self.start, to: Self.start + 86_400, skipping: news.map(\.0).filter { $0 != placeholders },
             placeholder: placeholders, infoSkipping: news.map(\.0) + [Self.window("12:00", "12:20")])
        alert("news", "a", "stream_unreadable", "02:00:25", "02:10:05", message: "the stream could not be opened: HTTP 404")
        alert("news", "a", "no_tags", "02:00:25", "02:10:05")
        alert("news", "a", "only_uncreditable_tags", "05:00:25", "05:03:25")
        alert("news", "a", "no_tags", "11:00:25", "11:05:05")
        record("news", "a", "14:00:02", .event(MeterRecord.Event(code: 2002, message: "2002 shutdown")))
        record("news", "a", "14:02:20", .event(MeterRecord.Event(code: 2001, message: "2001 startup")))
        record("news", "a", "14:02:21", .resume(MeterRecord.Resume(source: "https://origin/news.m3u8", mediaSequence: 8_000, lostSeconds: 12,
                                                                   message: "resumed")))
        record("news", "a", "17:01:00", .loss(MeterRecord.Loss(output: "collector", records: 5, from: Self.at("17:00:05"), to: Self.at("17:00:45"),
                                                               message: "5 records lost")))
        record("news", "a", "09:00:00", .alert(MeterRecord.Alert(name: "failing_checks", active: true,
                                                                 message: "failing the QA checks tag_spacing, info_cadence")))
        record("news", "a", "09:15:00", .alert(MeterRecord.Alert(name: "failing_checks", active: true, message: "failing the QA checks tag_spacing")))
        record("news", "a", "09:30:00", .alert(MeterRecord.Alert(name: "failing_checks", active: false, message: "every QA check passes")))
        // An audit of the renditions (`audit_renditions`) found one without tags for 20 minutes, then two.
        record("news", "a", "10:00:00", .alert(MeterRecord.Alert(name: "renditions_differ", active: true,
                                                                 message: "renditions differ: https://origin/news/v1.m3u8: no Nielsen tag at all")))
        record("news", "a", "10:10:00", .alert(MeterRecord.Alert(name: "renditions_differ", active: true, message: Self.renditionsDiffer)))
        record("news", "a", "10:20:00", .alert(MeterRecord.Alert(name: "renditions_differ", active: false,
                                                                 message: "every rendition carries the same tags")))

        // sport: two meters; b covers a's half hour; both miss a failover; deleted at 22:00.
        let both = Self.window("20:00", "20:02")
        plantedCauses["sport"] = [(both, .failover)]
        tags("sport", meter: "a", factory: &factory, from: Self.start, to: Self.at("22:00"), skipping: [Self.window("03:00", "03:30"), both])
        tags("sport", meter: "b", factory: &factory, from: Self.start, to: Self.at("22:00"), skipping: [both])
        alert("sport", "a", "no_tags", "03:00:25", "03:30:05")
        for meter in ["a", "b"] {
            alert("sport", meter, "on_backup", "19:59:58", "20:02:10", message: "read from a redundant copy of the stream: its first host failed")
            record("sport", meter, "19:59:58", .warning(MeterRecord.Warning("switched from cdn-a to cdn-b: 3 segments lost")))
        }
        record("sport", "a", "22:00:00", .custom(MeterRecord.Custom(type: "config_change", message: "delete channel sport by ops",
                                                                    fields: ["action": "delete", "by": "ops"])))

        // late: first heard of at noon.
        tags("late", meter: "a", factory: &factory, from: Self.at("12:00"), to: Self.start + 86_400, skipping: [])
        records.sort { $0.sentAt < $1.sentAt }
    }

    private mutating func tags(_ channel: String, meter: String, factory: inout NielsenTagFactory, from: Double, to: Double, skipping: [Range<Double>],
                               placeholder: Range<Double>? = nil, infoSkipping: [Range<Double>]? = nil) {
        var time = from + 5
        while time < to {
            if !skipping.contains(where: { $0.contains(time) }) {
                let isPlaceholder = placeholder?.contains(time) ?? false
                let owner = factory.owner(secondsIntoDay: Int(time - Self.start), placeholder: isPlaceholder)
                deliver(owner, channel: channel, meter: meter, at: time)
                if !isPlaceholder { creditable[channel, default: []].append(time) }
            }
            time += 10
        }
        var infoTime = from + 7
        while time > from, infoTime < to {
            if !(infoSkipping ?? skipping).contains(where: { $0.contains(infoTime) }) {
                deliver(factory.infoOwner(), channel: channel, meter: meter, at: infoTime)
                info[channel, default: []].append(infoTime)
            }
            infoTime += 300
        }
    }

    private mutating func deliver(_ owner: String, channel: String, meter: String, at time: Double) {
        var record = MeterRecord.delivery(owner, context: TagContext(pts: Int64(time * 90_000), origin: TagOrigin(source: "https://origin/\(channel).m3u8"),
                                                                     programDateTime: nil),
                                          at: Date(timeIntervalSince1970: time))
        record.channel = channel
        record.meter = meter
        records.append(record)
    }

    private mutating func alert(_ channel: String, _ meter: String, _ name: String, _ from: String, _ to: String, message: String? = nil) {
        record(channel, meter, from, .alert(MeterRecord.Alert(name: name, active: true, message: message)))
        record(channel, meter, to, .alert(MeterRecord.Alert(name: name, active: false, message: nil)))
    }

    private mutating func record(_ channel: String, _ meter: String, _ clock: String, _ content: MeterRecord.Content) {
        records.append(MeterRecord(sentAt: Self.at(clock), channel: channel, meter: meter, content))
    }

    /// The gaps of `channel` on air from `onAir`, found the plain way: every interval of 30 s or
    /// more between its sorted creditable tags, and the edges.
    func gaps(_ channel: String, onAir: Range<Double>) -> [Gap] {
        let times = Array(Set(creditable[channel] ?? [])).sorted().filter { onAir.contains($0) }
        var found: [Gap] = []
        var previous = onAir.lowerBound
        for time in times + [onAir.upperBound] {
            if time - previous >= 30 {
                let cause = plantedCauses[channel]?.first { $0.window.overlaps(previous..<time) }?.cause ?? .unexplained
                found.append(Gap(from: previous, to: time, cause: cause))
            }
            previous = time
        }
        return found
    }

    /// Minutes on air with a creditable tag.
    func creditedMinutes(_ channel: String, onAir: Range<Double>) -> Int {
        Set((creditable[channel] ?? []).filter { onAir.contains($0) }.map { Int(($0 / 60).rounded(.down)) }).count
    }

    /// The records as JSON lines, as a meter writes them.
    var jsonLines: Data {
        Data(records.map { String(decoding: $0.jsonLine, as: UTF8.self) + "\n" }.joined().utf8)
    }
}
