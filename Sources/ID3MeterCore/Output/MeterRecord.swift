import FoundationEssentials

/// One line of the meter's output: who wrote it and when, and what it is (`content`), one kind
/// of record each: a `sendID3` delivery, an engine event, an alert starting or ending, where a
/// restarted meter resumed, records an output had to drop, a warning, or a kind of the
/// application's own (`serve`'s line-up changes). Decodable too: a restarted meter reads its
/// records back to know what it delivered.
///
/// In JSON every kind is one flat object, its `type` naming the kind (docs/records.schema.json).
public struct MeterRecord: Codable, Sendable, Equatable {
    /// Unix epoch seconds when the record was made.
    public var sentAt: Double
    /// The line-up channel the record is of (`serve`), or `nil` for a meter of one stream.
    public var channel: String?
    /// The meter that wrote it (`OutputSet`'s `meter`: `serve`'s `--meter`, by default its
    /// host's name), so that the records of two meters of one channel can be told apart.
    public var meter: String?
    public var content: Content

    /// What a record is. Later versions may add kinds: a `switch` over it needs a `default:`
    /// to keep compiling (or match the kinds it cares about with `if case`).
    public enum Content: Sendable, Equatable {
        case delivery(Delivery)
        case event(Event)
        case alert(Alert)
        case resume(Resume)
        case loss(Loss)
        case warning(Warning)
        /// A segment given up on (`segment_failed`), or a reload of the playlist or MPD that
        /// failed after its retries (`playlist_failed`).
        case fetchFailure(FetchFailure)
        /// A kind the library does not make: the application's own (`serve`'s `config_change`),
        /// or one written by a later version, read back.
        case custom(Custom)
    }

    public init(sentAt: Double, channel: String? = nil, meter: String? = nil, _ content: Content) {
        self.sentAt = sentAt
        self.channel = channel
        self.meter = meter
        self.content = content
    }

    /// A `sendID3` call: the payload and where its tag was read.
    public struct Delivery: Sendable, Equatable {
        public var payload: String
        /// The tag's identity, the same in every meter's record of it (`TagIdentity`).
        public var tagID: String
        /// The input the tag was read from.
        public var source: String
        public var pts: Int64?
        /// The segment's media sequence number (`media_sequence`, as in scan records; records
        /// written before 2026-11 say `seq`, which reading them back still takes).
        public var mediaSequence: Int?
        public var discontinuitySequence: Int?
        public var segment: String?
        public var programDateTime: String?
        /// For a DASH segment: its Period, Representation and `$Time$`.
        public var period: String?
        public var representation: String?
        public var segmentTime: Int?
        /// For an MPEG-TS tag: its program_number and PID.
        public var program: Int?
        public var pid: Int?
        /// For a tag from an HLS interstitial's asset: the interstitial's ID.
        public var interstitial: String?

        /// The delivery of `payload`, placed by its tag's context.
        public init(_ payload: String, context: TagContext) {
            self.payload = payload
            tagID = TagIdentity.of(payload: payload)
            source = context.origin.source
            pts = context.pts
            let segment = context.origin.segment
            (mediaSequence, discontinuitySequence) = (segment?.mediaSequence, segment?.discontinuitySequence)
            self.segment = segment?.uri
            programDateTime = context.programDateTime.map(ProgramDateTime.format)
            (period, representation, segmentTime) = (segment?.dash?.period, segment?.dash?.representation, segment?.dash?.time)
            (program, pid) = (context.transportStream?.program, context.transportStream?.pid)
            interstitial = segment?.interstitial?.id
        }

        init(payload: String, tagID: String, source: String) {
            (self.payload, self.tagID, self.source) = (payload, tagID, source)
        }
    }

    /// An engine event (`EngineEvent`): its SDK code and its words.
    public struct Event: Sendable, Equatable {
        public var code: Int
        public var message: String

        public init(code: Int, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// An alert starting (`active`) or ending: a channel's (`no_tags`, `playlist_stale`...), or
    /// an output's (`output_write_failing`, with `output` naming it).
    public struct Alert: Sendable, Equatable {
        public var name: String
        public var active: Bool
        public var message: String?
        public var output: String?

        public init(name: String, active: Bool, message: String?, output: String? = nil) {
            self.name = name
            self.active = active
            self.message = message
            self.output = output
        }
    }

    /// Where a meter restarted from a checkpoint picked up on `source`.
    public struct Resume: Sendable, Equatable {
        public var source: String
        /// The segment it resumed at, or the playlist's when its sequence went back.
        public var mediaSequence: Int?
        /// At the live edge: the media seconds never read.
        public var lostSeconds: Double?
        public var message: String
    }

    /// Records of the channel that `output` had to drop: how many, and when the first and the
    /// last of them were made (Unix seconds).
    public struct Loss: Sendable, Equatable {
        public var output: String
        public var records: Int
        public var from: Double
        public var to: Double
        public var message: String
    }

    /// Something about a channel's stream or the run, in words (`serve`: its sequence went
    /// back; an output's notes).
    public struct Warning: Sendable, Equatable {
        public var message: String

        public init(_ message: String) { self.message = message }
    }

    /// A fetch the meter gave up on: what the report counts a channel's lost segments by, and
    /// names their fault with (docs/RELIABILITY.md).
    public struct FetchFailure: Sendable, Equatable {
        public enum Resource: String, Sendable {
            case segment, playlist
        }

        public var resource: Resource
        /// The input metered.
        public var source: String
        /// The segment's or playlist's URL, without its query (a CDN token is a secret).
        public var url: String?
        public var mediaSequence: Int?
        /// How it failed: `http`, `timeout`, `tls`, `connection`, `refused`, `unreadable`, `other`.
        public var reason: String
        /// The HTTP status, for `http`.
        public var status: Int?
        public var attempts: Int?
        public var message: String

        public init(resource: Resource, source: String, url: String?, mediaSequence: Int?, reason: String, status: Int?, attempts: Int?,
                    message: String) {
            (self.resource, self.source, self.url, self.mediaSequence) = (resource, source, url, mediaSequence)
            (self.reason, self.status, self.attempts, self.message) = (reason, status, attempts, message)
        }
    }

    /// A record of a kind the library does not make: its `type`, its words and its other
    /// fields, all strings. A `type` of the library's own kinds is read back as that kind.
    public struct Custom: Sendable, Equatable {
        public var type: String
        public var message: String?
        public var fields: [String: String]

        public init(type: String, message: String?, fields: [String: String]) {
            self.type = type
            self.message = message
            self.fields = fields
        }
    }

    /// The kind's name, as JSON's `type` says it: `send_id3`, `event`, `alert`, `resume`,
    /// `loss`, `warning`, or a custom record's own.
    public var type: String {
        switch content {
        case .delivery: "send_id3"
        case .event: "event"
        case .alert: "alert"
        case .resume: "resume"
        case .loss: "loss"
        case .warning: "warning"
        case .fetchFailure(let failure): "\(failure.resource.rawValue)_failed"
        case .custom(let custom): custom.type
        }
    }

    /// The record in words, for a log line; a delivery has none.
    public var message: String? {
        switch content {
        case .delivery: nil
        case .event(let event): event.message
        case .alert(let alert): alert.message
        case .resume(let resume): resume.message
        case .loss(let loss): loss.message
        case .warning(let warning): warning.message
        case .fetchFailure(let failure): failure.message
        case .custom(let custom): custom.message
        }
    }

    /// The delivery this record is, if it is one.
    public var delivery: Delivery? {
        if case .delivery(let delivery) = content { delivery } else { nil }
    }

    /// The alert this record is, if it is one.
    public var alert: Alert? {
        if case .alert(let alert) = content { alert } else { nil }
    }

    /// The record of a `sendID3(payload)` call made at `date`, placed by the tag's context.
    public static func delivery(_ payload: String, context: TagContext, at date: Date) -> MeterRecord {
        MeterRecord(sentAt: date.timeIntervalSince1970, .delivery(Delivery(payload, context: context)))
    }

    /// The record of an engine event reported at `date`.
    package static func event(_ event: EngineEvent, at date: Date) -> MeterRecord {
        MeterRecord(sentAt: date.timeIntervalSince1970, .event(Event(code: event.code, message: event.description)))
    }

    /// A warning about `channel`'s stream, or about the run when `nil`, in words.
    public static func warning(_ message: String, channel: String?, at date: Date) -> MeterRecord {
        MeterRecord(sentAt: date.timeIntervalSince1970, channel: channel, .warning(Warning(message)))
    }

    /// The record of `change` on `channel`, at `date`, with `message` saying why in words.
    package static func alert(_ change: TagLossWatch.Change, channel: String, message: String, at date: Date) -> MeterRecord {
        alert(change.alert.rawValue, active: change.active, channel: channel, message: message, at: date)
    }

    /// The record of the alert `name` starting (`active`) or ending on `channel`.
    public static func alert(_ name: String, active: Bool, channel: String, message: String, at date: Date) -> MeterRecord {
        MeterRecord(sentAt: date.timeIntervalSince1970, channel: channel, .alert(Alert(name: name, active: active, message: message)))
    }
}

extension MeterRecord {
    /// The record of where a meter restarted from `point` picked up on `source`.
    public static func resume(_ resumption: Resumption, from point: ResumePoint, at date: Date) -> MeterRecord {
        let resume = switch resumption {
        case .atSegment(let sequence):
            Resume(source: point.input, mediaSequence: sequence,
                   message: "resumed at segment \(sequence), after the tag delivered at \(Self.clock(point.sentAt))")
        case .atLiveEdge(let lost, let seconds):
            Resume(source: point.input, lostSeconds: seconds,
                   message: "segment \(point.mediaSequence) of the last delivered tag has left the live window; joined at the live edge, "
                       + "about \(FixedPoint.string(seconds, places: 1)) s lost"
                       + (lost.map { " (segments \($0.lowerBound)...\($0.upperBound), and the rest of \(point.mediaSequence))" }
                           ?? " (the rest of segment \(point.mediaSequence))"))
        case .sequenceWentBack(let sequence):
            Resume(source: point.input, mediaSequence: sequence,
                   message: "the playlist's media sequence (\(sequence)) is behind the checkpoint's (\(point.mediaSequence)); "
                       + "joined at the live edge, the loss unknown")
        }
        return MeterRecord(sentAt: date.timeIntervalSince1970, .resume(resume))
    }

    private static func clock(_ epoch: Double) -> String {
        Date(timeIntervalSince1970: epoch).formatted(.iso8601)
    }
}

extension MeterRecord {
    /// The record as one JSON line, without its line break: sorted keys, slashes as they are.
    /// The same bytes whichever output writes it (stdout, a records file, the collector's spool).
    /// A delivery, the kind written a thousand times a second over a line-up, is written
    /// directly (`JSONLine`, the same bytes); the other kinds by `JSONEncoder`, and a delivery
    /// whose time is not a number (the encoder refuses it, `JSONLine` would leave it out).
    public var jsonLine: [UInt8] {
        if case .delivery(let delivery) = content, sentAt.isFinite {
            var line: [UInt8] = []
            line.reserveCapacity(delivery.payload.utf8.count + 320)
            append(delivery, to: &line)
            return line
        }
        return (try? Self.encoder.encode(self)).map { [UInt8]($0) } ?? Array("{}".utf8)
    }

    /// The keys in their sorted order: `encode(to:)`'s fields of a delivery, and the envelope's.
    private func append(_ delivery: Delivery, to output: inout [UInt8]) {
        JSONLine.write(appendingTo: &output) { line in
            line.add("channel", channel)
            line.add("discontinuity_sequence", delivery.discontinuitySequence)
            line.add("interstitial", delivery.interstitial)
            line.add("media_sequence", delivery.mediaSequence)
            line.add("meter", meter)
            line.add("payload", delivery.payload)
            line.add("period", delivery.period)
            line.add("pid", delivery.pid)
            line.add("program", delivery.program)
            line.add("program_date_time", delivery.programDateTime)
            line.add("pts", delivery.pts)
            line.add("representation", delivery.representation)
            line.add("segment", delivery.segment)
            line.add("segment_time", delivery.segmentTime)
            line.add("sent_at", sentAt)
            line.add("source", delivery.source)
            line.add("tag_id", delivery.tagID)
            line.add("type", "send_id3")
        }
    }

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
