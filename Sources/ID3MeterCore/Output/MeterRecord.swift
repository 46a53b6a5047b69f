import FoundationEssentials

/// One line of the meter's output: a `sendID3` delivery, an engine event, an alert starting or
/// ending (a channel's tag loss in `serve`, an output that cannot be written), where a restarted
/// meter resumed (`--state`), or records an output had to drop. Decodable too: a restarted
/// meter reads its records back to know what it delivered.
public struct MeterRecord: Codable, Sendable, Equatable {
    /// A delivery (`send_id3`), an engine event, an alert, a resumption, records lost by an
    /// output, a warning about a channel's stream (`serve`: its sequence went back, say), or a
    /// change of `serve`'s line-up (the audit trail).
    public enum Kind: String, Codable, Sendable { case sendID3 = "send_id3", event, alert, resume, loss, warning, configChange = "config_change" }

    public var type: Kind
    /// Unix epoch seconds when the call was made.
    public var sentAt: Double
    public var source: String?
    public var payload: String?
    /// For a delivery: the tag's identity, the same in every meter's record of it (`TagIdentity`).
    public var tagID: String?
    public var pts: Int64?
    /// The segment's media sequence number (`media_sequence`, as in scan records; records
    /// written before 2026-11 say `seq`, which reading them back still takes).
    public var mediaSequence: Int?
    public var discontinuitySequence: Int?
    public var segment: String?
    public var programDateTime: String?
    /// For an engine event: its SDK code (`EngineEvent.code`) and its words.
    public var event: Int?
    public var message: String?
    /// The line-up channel the record is of (`serve`).
    public var channel: String?
    /// The meter that wrote it (`serve`'s `--meter`, by default its host's name: a pod's), so
    /// that the records of two meters of one channel can be told apart.
    public var meter: String?
    /// For an alert: which (`TagLossWatch.Alert`), and whether it starts (true) or ends.
    public var alert: String?
    public var active: Bool?
    /// For a resumption at the live edge: the media seconds never read.
    public var lostSeconds: Double?
    /// For a loss: how many records of `channel` one output dropped, and when the first and the
    /// last of them were made (Unix seconds).
    public var lostRecords: Int?
    public var lostFrom: Double?
    public var lostTo: Double?
    /// For an output's alert or loss: which output (`stdout`, `--output FILE`, `collector`).
    public var output: String?
    /// For a line-up change: `add`, `replace`, `delete` or `reload`; who made it (an API token's
    /// name, `SIGHUP`, or `local` for a tokenless loopback API); the channel's URL before and after.
    public var action: String?
    public var by: String?
    public var oldURL: String?
    public var newURL: String?
    /// For a DASH segment's delivery: its Period, Representation and `$Time$`.
    public var period: String?
    public var representation: String?
    public var segmentTime: Int?
    /// For an MPEG-TS tag's delivery: its program_number and PID.
    public var program: Int?
    public var pid: Int?
    /// For a delivery from an HLS interstitial's asset: the interstitial's ID.
    public var interstitial: String?

    enum CodingKeys: String, CodingKey {
        case type, sentAt = "sent_at", source, payload, tagID = "tag_id", pts, mediaSequence = "media_sequence", discontinuitySequence = "discontinuity_sequence"
        case segment, programDateTime = "program_date_time", event, message, channel, meter, alert, active
        case lostSeconds = "lost_seconds", lostRecords = "lost_records", lostFrom = "lost_from", lostTo = "lost_to", output
        case action, by, oldURL = "old_url", newURL = "new_url"
        case period, representation, segmentTime = "segment_time", program, pid, interstitial
    }

    /// The record of a `sendID3(payload)` call made at `date`, placed by the tag's context.
    public static func delivery(_ payload: String, context: TagContext, at date: Date) -> MeterRecord {
        var record = MeterRecord(type: .sendID3, sentAt: date.timeIntervalSince1970, source: context.origin.source, payload: payload,
                                 tagID: TagIdentity.of(payload: payload), pts: context.pts, mediaSequence: context.origin.segment?.mediaSequence,
                                 discontinuitySequence: context.origin.segment?.discontinuitySequence,
                                 segment: context.origin.segment?.uri, programDateTime: context.programDateTime.map(ProgramDateTime.format))
        if let place = context.origin.segment?.dash {
            (record.period, record.representation, record.segmentTime) = (place.period, place.representation, place.time)
        }
        (record.program, record.pid) = (context.transportStream?.program, context.transportStream?.pid)
        record.interstitial = context.origin.segment?.interstitial?.id
        return record
    }

    /// The record of an engine event reported at `date`.
    package static func event(_ event: EngineEvent, at date: Date) -> MeterRecord {
        MeterRecord(type: .event, sentAt: date.timeIntervalSince1970, event: event.code, message: event.description)
    }

    /// A change of the line-up (`serve`'s audit trail): `action` on `channel` by `caller`, its URL before and after.
    public static func configChange(_ action: String, channel: String?, by caller: String, old: String?, new: String?,
                                    at date: Date) -> MeterRecord {
        var record = MeterRecord(type: .configChange, sentAt: date.timeIntervalSince1970, channel: channel)
        record.action = action
        record.by = caller
        record.oldURL = old
        record.newURL = new
        let what = [channel.map { "channel \($0)" }, old.map { "from \($0)" }, new.map { "to \($0)" }].compactMap { $0 }
        record.message = "\(action) \(what.joined(separator: " ")) by \(caller)"
        return record
    }

    /// A warning about `channel`'s stream, or about the run when `nil`, in words.
    public static func warning(_ message: String, channel: String?, at date: Date) -> MeterRecord {
        MeterRecord(type: .warning, sentAt: date.timeIntervalSince1970, message: message, channel: channel)
    }

    /// The record of `change` on `channel`, at `date`, with `message` saying why in words.
    package static func alert(_ change: TagLossWatch.Change, channel: String, message: String, at date: Date) -> MeterRecord {
        alert(change.alert.rawValue, active: change.active, channel: channel, message: message, at: date)
    }

    /// The record of the alert `name` starting (`active`) or ending on `channel`.
    public static func alert(_ name: String, active: Bool, channel: String, message: String, at date: Date) -> MeterRecord {
        MeterRecord(type: .alert, sentAt: date.timeIntervalSince1970, message: message, channel: channel, alert: name, active: active)
    }
}

extension MeterRecord {
    /// The record of where a meter restarted from `point` picked up on `source`.
    public static func resume(_ resumption: Resumption, from point: ResumePoint, at date: Date) -> MeterRecord {
        var record = MeterRecord(type: .resume, sentAt: date.timeIntervalSince1970, source: point.input)
        switch resumption {
        case .atSegment(let sequence):
            record.mediaSequence = sequence
            record.message = "resumed at segment \(sequence), after the tag delivered at \(Self.clock(point.sentAt))"
        case .atLiveEdge(let lost, let seconds):
            record.lostSeconds = seconds
            let segments = lost.map { " (segments \($0.lowerBound)...\($0.upperBound), and the rest of \(point.mediaSequence))" }
                ?? " (the rest of segment \(point.mediaSequence))"
            record.message = "segment \(point.mediaSequence) of the last delivered tag has left the live window; joined at the live edge, "
                + "about \(FixedPoint.string(seconds, places: 1)) s lost\(segments)"
        case .sequenceWentBack(let sequence):
            record.mediaSequence = sequence
            record.message = "the playlist's media sequence (\(sequence)) is behind the checkpoint's (\(point.mediaSequence)); "
                + "joined at the live edge, the loss unknown"
        }
        return record
    }

    private static func clock(_ epoch: Double) -> String {
        Date(timeIntervalSince1970: epoch).formatted(.iso8601)
    }
}

extension MeterRecord {
    /// The record as one JSON line, without its line break: sorted keys, slashes as they are.
    /// The same bytes whichever output writes it (stdout, a records file, the collector's spool).
    public var jsonLine: [UInt8] { (try? Self.encoder.encode(self)).map { [UInt8]($0) } ?? Array("{}".utf8) }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

/// Where meter records go. Writes come in order, each awaited before the next; the
/// requirements are `async` so that an `actor` conforms as it is, and a `Sendable` class with
/// synchronous methods does too.
public protocol MeterOutput: Sendable {
    /// Takes one record; it must not block on the network or the disk for long, and never
    /// traps: what it cannot store now it holds, or counts as lost.
    func write(_ record: MeterRecord) async
    /// Returns once everything written is delivered or safely stored.
    func finish() async
    /// Tries again to store what it holds (called about once a second).
    func retry() async
    /// What the output has to say about itself since it was last asked (its storage failing or
    /// back, records it had to drop), as records for every output.
    func takeNotices() async -> [MeterRecord]
    /// Its counts, for metrics; `nil` for an output that cannot fail.
    var health: OutputHealth? { get async }
}

extension MeterOutput {
    public func retry() {}
    public func takeNotices() -> [MeterRecord] { [] }
    public var health: OutputHealth? { nil }
}

/// How an output has fared: what `id3meter_output_*` series show.
public struct OutputHealth: Sendable, Equatable {
    /// `stdout`, `--output FILE`, `collector`.
    public var output: String
    /// Writes the storage refused (ENOSPC, EIO, EDQUOT, EROFS...).
    public var writeErrors = 0
    /// Records held in memory until the storage takes them.
    public var recordsHeld = 0
    /// Records dropped for good: held past the bound, or still held at exit.
    public var recordsLost = 0
    /// Records a collector refused for good, kept in the spool's `dead-letter/` folder.
    public var recordsDeadLettered = 0
    /// Why it is failing now; `nil` while it writes.
    public var failure: String?

    public init(output: String) { self.output = output }
}
