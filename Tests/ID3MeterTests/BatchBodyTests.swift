import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterServe

/// The collector reads a batch's records itself (`BatchBody`, `FlatRecordDecoder`) and keeps
/// them for reports that read them back with JSONDecoder: it must take exactly the records
/// JSONDecoder takes, as JSONDecoder reads them.
@Suite("collect: a batch read as JSONDecoder reads it")
struct BatchBodyTests {
    static let delivery = #"{"channel":"news","discontinuity_sequence":0,"media_sequence":7,"meter":"a","payload":"www.nielsen.com/X/Y/Z/1/1/00","pts":900000,"segment":"https://cdn.example/seg7.ts","sent_at":1795000000.25,"source":"https://cdn.example/master.m3u8","tag_id":"0123456789abcdef","type":"send_id3"}"#

    /// The delivery with `field`'s value written as `value` (a new field when it has none).
    static func changed(_ field: String, _ value: String) -> String {
        let pattern = try! Regex("\"\(field)\":(\"[^\"]*\"|[^,}]*)")
        let replaced = delivery.replacing(pattern, maxReplacements: 1) { _ in "\"\(field)\":\(value)" }
        return replaced == delivery && !delivery.contains("\"\(field)\":\(value)") ? String(delivery.dropLast()) + ",\"\(field)\":\(value)}" : replaced
    }

    static let records: [String] = [
        delivery,
        #"{"type":"alert","sent_at":1795000001,"channel":"news","meter":"a","alert":"no_tags","active":true,"message":"no tags for 30 s"}"#,
        #"{"type":"alert","sent_at":1795000001,"channel":"news","alert":"no_tags","active":1}"#,
        #"{"type":"event","sent_at":1795000002,"event":4,"message":"x"}"#,
        #"{"type":"loss","sent_at":1795000003,"output":"collector","lost_records":3,"lost_from":1795000000,"lost_to":1795000002.5}"#,
        #"{"type":"config_change","sent_at":1795000004,"channel":"news","action":"delete","by":{"who":"op"},"n":3}"#,
        #"{"type":"warning","sent_at":1795000005,"message":"a \"quoted\" word"}"#,
        #"{"type":"send_id3","sent_at":1795000006,"payload":"www.nielsen.com/1"}"#,
        changed("sent_at", "01795000000"), changed("sent_at", "1.795e9"), changed("sent_at", "1e400"), changed("sent_at", "-0"),
        changed("sent_at", "\"1795000000\""), changed("sent_at", "null"),
        changed("pts", "1.0"), changed("pts", "1e2"), changed("pts", "-0"), changed("pts", "9223372036854775808"), changed("pts", "00"),
        changed("pts", "-01"), changed("pts", "null"), changed("pts", "true"), changed("pts", "[1]"),
        changed("channel", #""n\u0065ws""#), changed("channel", "null"), changed("channel", "7"), changed("channel", #"{"a":1}"#),
        changed("payload", "null"), changed("payload", #""www.nielsen.com\/1""#), changed("payload", "\"www.nielsen.com/é\""),
        changed("extra", #"{"deep":[1,2,{"x":null}]}"#), changed("media_sequence", "7.5"),
        String(delivery.dropLast()) + #","channel":"sport"}"#,
        #"{"type":"send_id3","sent_at":1795000000,"payload":"a","pay\u006coad":"b"}"#,
    ]

    @Test func everyRecordAsJSONDecoderReadsIt() throws {
        var taken = 0
        for json in Self.records {
            let expected = try? JSONDecoder().decode(MeterRecord.self, from: Data(json.utf8))
            let body = #"{"batch":"b","records":["# + json + "]}"
            let read = try? Array(body.utf8).withUnsafeBytes { try BatchBody.batch(in: $0, by: "t", at: 0) }
            #expect(read?.records.first?.record == expected, "\(json)")
            if read != nil { #expect(read?.records.first?.json == json) }
            taken += expected == nil ? 0 : 1
        }
        #expect(taken >= 15, "the cases include records taken: \(taken)")
    }

    /// A record of thousands of fields (a hostile post) is read as JSONDecoder reads it, in time:
    /// each key looked up by a walk over every field was quadratic in them.
    @Test(.timeLimit(.minutes(1))) func aRecordOfManyFieldsIsReadAsJSONDecoderReadsIt() throws {
        let extra = (0..<20_000).map { #""k\#($0)":"v""# }.joined(separator: ",")
        for json in [#"{"type":"config_change","sent_at":1795000004,"channel":"news",\#(extra)}"#,
                     String(Self.delivery.dropLast()) + "," + extra + "}"] {
            let expected = try JSONDecoder().decode(MeterRecord.self, from: Data(json.utf8))
            let body = #"{"batch":"b","records":["# + json + "]}"
            let read = try Array(body.utf8).withUnsafeBytes { try BatchBody.batch(in: $0, by: "t", at: 0) }
            #expect(read.records.first?.record == expected)
        }
    }

    /// Invalid UTF-8 inside a string is refused by both.
    @Test func bytesThatAreNotUTF8AreRefused() {
        var body = Array(#"{"batch":"b","records":["#.utf8) + Array(Self.delivery.utf8) + Array("]}".utf8)
        let at = body.firstIndex(of: UInt8(ascii: "X"))!
        body[at] = 0xFF
        #expect((try? body.withUnsafeBytes { try BatchBody.batch(in: $0, by: "t", at: 0) }) == nil)
    }
}
