import FoundationEssentials

/// Records an output had to drop, by channel: how many, and the span of time they were made
/// in. What a `loss` record says, one per channel, so that a loss is never silent.
package struct RecordLoss: Sendable, Equatable {
    public struct Span: Sendable, Equatable {
        public var count: Int
        public var from: Double
        public var to: Double
    }

    /// By channel (`""` for the single-stream meter).
    public private(set) var byChannel: [String: Span] = [:]

    public init() {}

    public var isEmpty: Bool { byChannel.isEmpty }
    public var count: Int { byChannel.values.reduce(0) { $0 + $1.count } }

    /// Counts one record made at `sentAt` on `channel`.
    public mutating func add(sentAt: Double, channel: String?) {
        let key = channel ?? ""
        if var span = byChannel[key] {
            span.count += 1
            span.from = min(span.from, sentAt)
            span.to = max(span.to, sentAt)
            byChannel[key] = span
        } else {
            byChannel[key] = Span(count: 1, from: sentAt, to: sentAt)
        }
    }

    /// One `loss` record per channel, by `output`, for `why` ("could not be stored (...)").
    public func records(output: String, why: String, at date: Date) -> [MeterRecord] {
        byChannel.sorted { $0.key < $1.key }.map { channel, span in
            let whose = channel.isEmpty ? "" : " of channel \(channel)"
            let message = "\(span.count) record\(span.count == 1 ? "" : "s")\(whose), made from \(Self.clock(span.from)) "
                + "to \(Self.clock(span.to)), \(why) and \(span.count == 1 ? "was" : "were") dropped from \(output)"
            return MeterRecord(sentAt: date.timeIntervalSince1970, channel: channel.isEmpty ? nil : channel,
                               .loss(MeterRecord.Loss(output: output, records: span.count, from: span.from, to: span.to, message: message)))
        }
    }

    static func clock(_ epoch: Double) -> String {
        Date(timeIntervalSince1970: epoch).formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
    }
}

extension MeterRecord {
    /// An output's alert: `output` cannot be written (`failure` says why), or can again (`nil`).
    /// `meanwhile` says what happens until it can ("records are held in memory until it can").
    public static func outputAlert(_ output: String, failure: String?, held: Int, meanwhile: String, at date: Date) -> MeterRecord {
        let message = failure.map { "\(output) cannot be written (\($0)); \(meanwhile)" }
            ?? (held == 0 ? "\(output) is written again"
                : "\(output) is written again; the \(held) record\(held == 1 ? "" : "s") held meanwhile \(held == 1 ? "is" : "are") in it")
        return MeterRecord(sentAt: date.timeIntervalSince1970,
                           .alert(Alert(name: "output_write_failing", active: failure != nil, message: message, output: output)))
    }
}
