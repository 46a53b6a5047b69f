import Foundation

/// One line of the meter's output: a `sendID3` delivery, or an engine event.
public struct MeterRecord: Encodable, Sendable, Equatable {
    public enum Kind: String, Encodable, Sendable { case sendID3 = "send_id3", event }

    public var type: Kind
    /// Unix epoch seconds when the call was made.
    public var sentAt: Double
    public var source: String?
    public var payload: String?
    public var pts: Int64?
    public var seq: Int?
    public var discontinuitySequence: Int?
    public var segment: String?
    public var programDateTime: String?
    public var event: Int?
    public var message: String?

    enum CodingKeys: String, CodingKey {
        case type, sentAt = "sent_at", source, payload, pts, seq, discontinuitySequence = "discontinuity_sequence"
        case segment, programDateTime = "program_date_time", event, message
    }

    public static func delivery(_ payload: String, context: TagContext, at date: Date) -> MeterRecord {
        MeterRecord(type: .sendID3, sentAt: date.timeIntervalSince1970, source: context.origin.source, payload: payload,
                    pts: context.pts, seq: context.origin.segment?.mediaSequence,
                    discontinuitySequence: context.origin.segment?.discontinuitySequence,
                    segment: context.origin.segment?.uri, programDateTime: context.programDateTime.map(ProgramDateTime.format))
    }

    public static func event(_ event: EngineEvent, at date: Date) -> MeterRecord {
        MeterRecord(type: .event, sentAt: date.timeIntervalSince1970, event: event.code, message: event.description)
    }
}

/// Where meter records go. Writes come from one task at a time.
public protocol MeterOutput: AnyObject {
    func write(_ record: MeterRecord)
    /// Returns once everything written is delivered or safely stored.
    func finish() async
}
