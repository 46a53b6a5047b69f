import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore

/// A record is one kind each (a delivery is not an alert is not an audit line), and its JSON
/// stays the flat object collectors read: every kind read back is the record written, a kind
/// the library does not make is kept as a custom record, and records of older meters still read.
@Suite("Meter records by kind")
struct MeterRecordKindTests {
    static let at = Date(timeIntervalSince1970: 1_795_000_000.25)
    static let segment = TagOrigin.Segment(uri: "https://cdn/live/s7.ts", mediaSequence: 7, discontinuitySequence: 1)
    static let context = TagContext(pts: 900, origin: TagOrigin(source: "https://cdn/live/index.m3u8", segment: segment),
                                    programDateTime: nil)

    static func json(_ record: MeterRecord) -> String { String(decoding: record.jsonLine, as: UTF8.self) }
    static func read(_ line: String) throws -> MeterRecord { try JSONDecoder().decode(MeterRecord.self, from: Data(line.utf8)) }

    @Test func everyKindReadsBackAsWritten() throws {
        let point = ResumePoint(input: "https://cdn/live/index.m3u8", mediaSequence: 7, pts: 900, payload: "www.nielsen.com/x", sentAt: 0)
        var delivery = MeterRecord.delivery("www.nielsen.com/x", context: Self.context, at: Self.at)
        delivery.channel = "news"
        delivery.meter = "pod-1"
        let records: [MeterRecord] = [
            delivery,
            .event(.startup, at: Self.at),
            .alert("no_tags", active: true, channel: "news", message: "no Nielsen tag for 30 s", at: Self.at),
            .outputAlert("collector", failure: "HTTP 503", held: 3, meanwhile: "records wait in the spool", at: Self.at),
            .resume(.atLiveEdge(lost: 8...9, seconds: 12), from: point, at: Self.at),
            .resume(.atSegment(7), from: point, at: Self.at),
            .warning("the media sequence went back", channel: "news", at: Self.at),
            MeterRecord(sentAt: 5, channel: "news", .custom(MeterRecord.Custom(type: "config_change", message: "add channel news by ops",
                                                                               fields: ["action": "add", "by": "ops"]))),
        ] + { var loss = RecordLoss(); loss.add(sentAt: 10, channel: "news"); loss.add(sentAt: 12, channel: "news")
            return loss.records(output: "stdout", why: "could not be stored (ENOSPC)", at: Self.at) }()
        #expect(Set(records.map(\.type)) == ["send_id3", "event", "alert", "resume", "warning", "config_change", "loss"])
        for record in records {
            #expect(try Self.read(Self.json(record)) == record, "\(Self.json(record))")
        }
    }

    /// The kinds' fields are where the flat JSON has always had them (docs/records.schema.json).
    @Test func aDeliveryIsTheFlatObjectCollectorsRead() throws {
        let line = Self.json(.delivery("www.nielsen.com/x", context: Self.context, at: Self.at))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["type", "sent_at", "source", "payload", "tag_id", "pts", "media_sequence",
                                      "discontinuity_sequence", "segment"])
        #expect(object["type"] as? String == "send_id3" && object["media_sequence"] as? Int == 7 && object["pts"] as? Int == 900)
        let loss = Self.json(RecordLoss.records({ var loss = RecordLoss(); loss.add(sentAt: 10, channel: nil); return loss }())(
            output: "stdout", why: "could not be stored", at: Self.at)[0])
        let lossObject = try #require(try JSONSerialization.jsonObject(with: Data(loss.utf8)) as? [String: Any])
        #expect(Set(lossObject.keys) == ["type", "sent_at", "output", "lost_records", "lost_from", "lost_to", "message"])
    }

    /// A delivery written before 2026-11 (`seq`, no `tag_id`) reads as a delivery with its
    /// sequence, its tag id that of today's record of the same payload, and folds into a resume point.
    @Test func olderMetersRecordsStillRead() throws {
        let old = try Self.read(#"{"type":"send_id3","sent_at":1795000000,"source":"https://cdn/live/index.m3u8","payload":"www.nielsen.com/x","pts":900,"seq":7}"#)
        let delivery = try #require(old.delivery)
        #expect(delivery.mediaSequence == 7)
        #expect(delivery.tagID == MeterRecord.delivery("www.nielsen.com/x", context: Self.context, at: Self.at).delivery?.tagID)
        #expect(ResumePoint(old)?.mediaSequence == 7)
    }

    /// A later version's kind: kept as a custom record with its string fields, never taken for a
    /// delivery, and written back with its type.
    @Test func aKindThisVersionDoesNotKnowIsKeptAsCustom() throws {
        let line = #"{"type":"heartbeat","sent_at":7,"channel":"news","note":"alive","count":3}"#
        let record = try Self.read(line)
        #expect(record.content == .custom(MeterRecord.Custom(type: "heartbeat", message: nil, fields: ["note": "alive"])))
        #expect(record.channel == "news" && record.delivery == nil && ResumePoint(record) == nil)
        #expect(Self.json(record) == #"{"channel":"news","note":"alive","sent_at":7,"type":"heartbeat"}"#)
        // A delivery without a payload is not a delivery: refused, not read as an empty one.
        #expect(throws: DecodingError.self) { try Self.read(#"{"type":"send_id3","sent_at":1}"#) }
    }
}
