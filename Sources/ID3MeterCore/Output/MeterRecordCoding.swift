import FoundationEssentials

/// A record in JSON is one flat object: the envelope (`type`, `sent_at`, `channel`, `meter`) and
/// its kind's fields beside them, snake-cased. Collectors and `jq` filters read that shape
/// (docs/records.schema.json), so the kinds are a Swift view of it, not a change of it.
extension MeterRecord {
    struct Key: CodingKey, Hashable {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init(stringValue: String) { self.init(stringValue) }
        init?(intValue: Int) { nil }

        static let type = Key("type"), sentAt = Key("sent_at"), channel = Key("channel"), meter = Key("meter"), message = Key("message")
        static let source = Key("source"), payload = Key("payload"), tagID = Key("tag_id"), pts = Key("pts")
        static let mediaSequence = Key("media_sequence"), legacySequence = Key("seq"), discontinuitySequence = Key("discontinuity_sequence")
        static let segment = Key("segment"), programDateTime = Key("program_date_time"), period = Key("period")
        static let representation = Key("representation"), segmentTime = Key("segment_time"), program = Key("program"), pid = Key("pid")
        static let interstitial = Key("interstitial"), event = Key("event"), alert = Key("alert"), active = Key("active")
        static let output = Key("output"), lostSeconds = Key("lost_seconds"), lostRecords = Key("lost_records")
        static let lostFrom = Key("lost_from"), lostTo = Key("lost_to")
        static let url = Key("url"), reason = Key("reason"), status = Key("status"), attempts = Key("attempts")

        /// Keys a custom record's fields cannot take: the envelope's.
        static let envelope: Set<Key> = [.type, .sentAt, .channel, .meter, .message]
    }

    public init(from decoder: any Decoder) throws {
        let json = try decoder.container(keyedBy: Key.self)
        sentAt = try json.decode(Double.self, forKey: .sentAt)
        channel = try json.decodeIfPresent(String.self, forKey: .channel)
        meter = try json.decodeIfPresent(String.self, forKey: .meter)
        let message = try json.decodeIfPresent(String.self, forKey: .message)
        func required(_ key: Key) throws -> String { try json.decode(String.self, forKey: key) }
        switch try json.decode(String.self, forKey: .type) {
        case "send_id3":
            let payload = try required(.payload)
            // Records written before 2026-11 have no `tag_id`: it is the payload's.
            var delivery = Delivery(payload: payload, tagID: try json.decodeIfPresent(String.self, forKey: .tagID) ?? TagIdentity.of(payload: payload),
                                    source: try json.decodeIfPresent(String.self, forKey: .source) ?? "")
            delivery.pts = try json.decodeIfPresent(Int64.self, forKey: .pts)
            delivery.mediaSequence = try json.decodeIfPresent(Int.self, forKey: .mediaSequence)
                ?? json.decodeIfPresent(Int.self, forKey: .legacySequence)
            delivery.discontinuitySequence = try json.decodeIfPresent(Int.self, forKey: .discontinuitySequence)
            delivery.segment = try json.decodeIfPresent(String.self, forKey: .segment)
            delivery.programDateTime = try json.decodeIfPresent(String.self, forKey: .programDateTime)
            delivery.period = try json.decodeIfPresent(String.self, forKey: .period)
            delivery.representation = try json.decodeIfPresent(String.self, forKey: .representation)
            delivery.segmentTime = try json.decodeIfPresent(Int.self, forKey: .segmentTime)
            delivery.program = try json.decodeIfPresent(Int.self, forKey: .program)
            delivery.pid = try json.decodeIfPresent(Int.self, forKey: .pid)
            delivery.interstitial = try json.decodeIfPresent(String.self, forKey: .interstitial)
            content = .delivery(delivery)
        case "event":
            content = .event(Event(code: try json.decode(Int.self, forKey: .event), message: message ?? ""))
        case "alert":
            content = .alert(Alert(name: try required(.alert), active: try json.decode(Bool.self, forKey: .active), message: message,
                                   output: try json.decodeIfPresent(String.self, forKey: .output)))
        case "resume":
            content = .resume(Resume(source: try json.decodeIfPresent(String.self, forKey: .source) ?? "",
                                     mediaSequence: try json.decodeIfPresent(Int.self, forKey: .mediaSequence),
                                     lostSeconds: try json.decodeIfPresent(Double.self, forKey: .lostSeconds), message: message ?? ""))
        case "loss":
            content = .loss(Loss(output: try required(.output), records: try json.decode(Int.self, forKey: .lostRecords),
                                 from: try json.decode(Double.self, forKey: .lostFrom), to: try json.decode(Double.self, forKey: .lostTo),
                                 message: message ?? ""))
        case "warning":
            content = .warning(Warning(message ?? ""))
        case "segment_failed", "playlist_failed":
            content = .fetchFailure(FetchFailure(
                resource: try json.decode(String.self, forKey: .type) == "segment_failed" ? .segment : .playlist,
                source: try json.decodeIfPresent(String.self, forKey: .source) ?? "", url: try json.decodeIfPresent(String.self, forKey: .url),
                mediaSequence: try json.decodeIfPresent(Int.self, forKey: .mediaSequence), reason: try required(.reason),
                status: try json.decodeIfPresent(Int.self, forKey: .status), attempts: try json.decodeIfPresent(Int.self, forKey: .attempts),
                message: message ?? ""))
        case let type:
            var fields: [String: String] = [:]
            for key in json.allKeys where !Key.envelope.contains(key) {
                if let value = try? json.decode(String.self, forKey: key) { fields[key.stringValue] = value }
            }
            content = .custom(Custom(type: type, message: message, fields: fields))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: Key.self)
        try json.encode(type, forKey: .type)
        try json.encode(sentAt, forKey: .sentAt)
        try json.encodeIfPresent(channel, forKey: .channel)
        try json.encodeIfPresent(meter, forKey: .meter)
        try json.encodeIfPresent(message, forKey: .message)
        switch content {
        case .delivery(let delivery):
            try json.encode(delivery.payload, forKey: .payload)
            try json.encode(delivery.tagID, forKey: .tagID)
            try json.encode(delivery.source, forKey: .source)
            try json.encodeIfPresent(delivery.pts, forKey: .pts)
            try json.encodeIfPresent(delivery.mediaSequence, forKey: .mediaSequence)
            try json.encodeIfPresent(delivery.discontinuitySequence, forKey: .discontinuitySequence)
            try json.encodeIfPresent(delivery.segment, forKey: .segment)
            try json.encodeIfPresent(delivery.programDateTime, forKey: .programDateTime)
            try json.encodeIfPresent(delivery.period, forKey: .period)
            try json.encodeIfPresent(delivery.representation, forKey: .representation)
            try json.encodeIfPresent(delivery.segmentTime, forKey: .segmentTime)
            try json.encodeIfPresent(delivery.program, forKey: .program)
            try json.encodeIfPresent(delivery.pid, forKey: .pid)
            try json.encodeIfPresent(delivery.interstitial, forKey: .interstitial)
        case .event(let event):
            try json.encode(event.code, forKey: .event)
        case .alert(let alert):
            try json.encode(alert.name, forKey: .alert)
            try json.encode(alert.active, forKey: .active)
            try json.encodeIfPresent(alert.output, forKey: .output)
        case .resume(let resume):
            try json.encode(resume.source, forKey: .source)
            try json.encodeIfPresent(resume.mediaSequence, forKey: .mediaSequence)
            try json.encodeIfPresent(resume.lostSeconds, forKey: .lostSeconds)
        case .loss(let loss):
            try json.encode(loss.output, forKey: .output)
            try json.encode(loss.records, forKey: .lostRecords)
            try json.encode(loss.from, forKey: .lostFrom)
            try json.encode(loss.to, forKey: .lostTo)
        case .warning:
            break
        case .fetchFailure(let failure):
            try json.encode(failure.source, forKey: .source)
            try json.encodeIfPresent(failure.url, forKey: .url)
            try json.encodeIfPresent(failure.mediaSequence, forKey: .mediaSequence)
            try json.encode(failure.reason, forKey: .reason)
            try json.encodeIfPresent(failure.status, forKey: .status)
            try json.encodeIfPresent(failure.attempts, forKey: .attempts)
        case .custom(let custom):
            for (name, value) in custom.fields where !Key.envelope.contains(Key(name)) {
                try json.encode(value, forKey: Key(name))
            }
        }
    }
}
