import FoundationEssentials

/// The last tag a stream's meter delivered, as its record says: where a restarted meter picks
/// up. Made from `send_id3` records only, so what is resumed from is what was recorded.
public struct ResumePoint: Codable, Sendable, Equatable {
    /// The input the tag was read from (`source` of the record): a checkpoint of another
    /// stream is not resumed from.
    public var input: String
    public var mediaSequence: Int
    public var discontinuitySequence: Int
    public var pts: Int64?
    public var payload: String
    /// When it was delivered (Unix seconds): the later of two points is the later delivery.
    public var sentAt: Double

    enum CodingKeys: String, CodingKey {
        case input, mediaSequence = "seq", discontinuitySequence = "discontinuity_sequence", pts, payload, sentAt = "sent_at"
    }

    public init(input: String, mediaSequence: Int, discontinuitySequence: Int = 0, pts: Int64?, payload: String, sentAt: Double) {
        self.input = input
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.pts = pts
        self.payload = payload
        self.sentAt = sentAt
    }

    /// The point a delivery record leaves; `nil` for any other record, or a delivery from an
    /// input without media sequence numbers (only playlists can be resumed).
    public init?(_ record: MeterRecord) {
        guard let delivery = record.delivery, let sequence = delivery.mediaSequence else { return nil }
        self.init(input: delivery.source, mediaSequence: sequence, discontinuitySequence: delivery.discontinuitySequence ?? 0,
                  pts: delivery.pts, payload: delivery.payload, sentAt: record.sentAt)
    }
}

/// The last delivery of each channel (`""` for the single-stream meter), folded from records in
/// the order they were written.
package struct ResumePoints: Codable, Sendable, Equatable {
    public var byChannel: [String: ResumePoint] = [:]

    public init(byChannel: [String: ResumePoint] = [:]) {
        self.byChannel = byChannel
    }

    public init(from decoder: any Decoder) throws {
        byChannel = try decoder.singleValueContainer().decode([String: ResumePoint].self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(byChannel)
    }

    /// Takes `record` if it is a delivery no older than what the channel has.
    public mutating func fold(_ record: MeterRecord) {
        guard let point = ResumePoint(record) else { return }
        fold(point, channel: record.channel ?? "")
    }

    public mutating func fold(_ point: ResumePoint, channel: String) {
        if let current = byChannel[channel], current.sentAt > point.sentAt { return }
        byChannel[channel] = point
    }

    public mutating func fold(_ other: ResumePoints) {
        for (channel, point) in other.byChannel { fold(point, channel: channel) }
    }
}
