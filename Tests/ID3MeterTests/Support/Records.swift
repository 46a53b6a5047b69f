@testable import ID3MeterCore

extension TagRecord {
    /// The records of `event`, gathered.
    static func all(for event: MediaEvent, allFrames: Bool) -> [TagRecord] {
        var gathered: [TagRecord] = []
        records(for: event, allFrames: allFrames) { gathered.append($0) }
        return gathered
    }

    /// The record's JSON line.
    var json: String {
        var bytes: [UInt8] = []
        appendJSON(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// One kind of meter record, with the envelope's time and channel beside it: what tests compare.
@dynamicMemberLookup
struct Stamped<Kind> {
    var sentAt: Double
    var channel: String?
    var kind: Kind

    subscript<Value>(dynamicMember path: KeyPath<Kind, Value>) -> Value { kind[keyPath: path] }
}

extension Sequence<MeterRecord> {
    /// The deliveries among these records, in order.
    var deliveries: [Stamped<MeterRecord.Delivery>] {
        compactMap { record in record.delivery.map { Stamped(sentAt: record.sentAt, channel: record.channel, kind: $0) } }
    }

    /// The alerts among these records, in order.
    var alerts: [Stamped<MeterRecord.Alert>] {
        compactMap { record in record.alert.map { Stamped(sentAt: record.sentAt, channel: record.channel, kind: $0) } }
    }

    /// The losses among these records, in order.
    var losses: [Stamped<MeterRecord.Loss>] {
        compactMap { record in
            guard case .loss(let loss) = record.content else { return nil }
            return Stamped(sentAt: record.sentAt, channel: record.channel, kind: loss)
        }
    }

    /// The words of the warnings among these records, in order.
    var warnings: [String] { compactMap { if case .warning(let warning) = $0.content { warning.message } else { nil } } }

    /// The SDK codes of the engine events among these records, in order.
    var eventCodes: [Int] { compactMap { if case .event(let event) = $0.content { event.code } else { nil } } }

    /// The records of `channel`.
    func of(_ channel: String) -> [MeterRecord] { filter { $0.channel == channel } }
}
