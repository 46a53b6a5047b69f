import Foundation
import Testing
@testable import ID3MeterCore
import SampleGenerator

/// The scan's hand-written JSON lines against Foundation's `JSONEncoder` (sorted keys, slashes
/// unescaped), on records with every field set to awkward values, and against a JSON parser.
@Suite("JSON lines as JSONEncoder writes them")
struct JSONLineTests {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A string of `length` characters drawn from the awkward ones: every control character,
    /// quotes, backslashes, slashes, DEL, non-ASCII letters, line separators, emoji.
    static func awkward(_ random: inout SeededRandom, length: Int) -> String {
        let pool: [Unicode.Scalar] = (0..<0x20).map { Unicode.Scalar(UInt8($0)) }
            + ["\"", "\\", "/", "\u{7F}", "a", "Z", "0", " ", "é", "ß", "\u{2028}", "\u{2029}", "\u{FEFF}", "😀", "日", "=", "_"]
        return String(String.UnicodeScalarView((0..<length).map { _ in pool[Int(random.next() % UInt64(pool.count))] }))
    }

    /// A record built as a scan builds one, from awkward parts: any kind with any of the parts
    /// a record can hold, a Nielsen payload of awkward fields, frames of every content.
    static func record(_ random: inout SeededRandom) -> TagRecord {
        func text() -> String? { random.next() % 5 == 0 ? nil : awkward(&random, length: Int(random.next() % 12)) }
        func number() -> Int { Int(Int64(bitPattern: random.next()) >> Int64(random.next() % 63)) }
        func maybe<T>(_ make: () -> T) -> T? { random.next() % 3 == 0 ? nil : make() }
        let segment = maybe { TagOrigin.Segment(uri: awkward(&random, length: 10), mediaSequence: number(), discontinuitySequence: number()) }
        // PTS as a stream carries them (33 bits), and others: their times are the doubles written.
        let pts = maybe { [Int64(random.next() % (1 << 33)), Int64(number()), 1, -3, 0][Int(random.next() % 5)] }
        let date = maybe { Date(timeIntervalSince1970: Double(random.next() % 4_000_000_000_000) / 1000) }
        // Slashes among the awkward characters cut the payload into fields of every shape.
        let nielsen = maybe { NielsenTag(owner: NielsenTag.ownerPrefix + "/" + awkward(&random, length: Int(random.next() % 300)))! }
        func content() -> ID3Frame.Content {
            switch random.next() % 5 {
            case 0: .priv(owner: awkward(&random, length: 20), data: [1, 2])
            case 1: .userText(description: awkward(&random, length: 9), value: "v")
            case 2: .text((0..<Int(random.next() % 3)).map { _ in awkward(&random, length: 5) })
            case 3: .skipped(reason: awkward(&random, length: 7))
            default: .other
            }
        }
        let frame = maybe { ID3Frame(id: awkward(&random, length: 4), size: number(), content: content()) }
        return TagRecord(type: [.nielsen, .frame, .malformed][Int(random.next() % 3)],
                         origin: TagOrigin(source: awkward(&random, length: 8), segment: segment), pts: pts, programDateTime: date,
                         nielsen: nielsen, frame: frame, id3Version: maybe { [.v2_2, .v2_3, .v2_4][Int(random.next() % 3)] },
                         reason: text(), notes: maybe { (0..<Int(random.next() % 3)).compactMap { _ in text() } })
    }

    /// Lines are appended one after another to one buffer, as a scan writes them.
    @Test func tenThousandAwkwardRecordsAreByteForByteTheEncoders() throws {
        var random = SeededRandom(seed: 20261122)
        var output = Array("{\"before\":1}\n".utf8)
        for _ in 0..<10_000 {
            let record = Self.record(&random)
            let expected = try Self.encoder.encode(record)
            let start = output.count
            record.appendJSON(to: &output)
            let line = Data(output[start...])
            #expect(line == expected)
            if line != expected { return }
            #expect(try JSONSerialization.jsonObject(with: line) is [String: Any])
            output.append(0x0A)
        }
        #expect(output.starts(with: Array("{\"before\":1}\n".utf8)))
    }

    /// Escapes are looked for eight bytes at a time: one awkward character at every position of
    /// strings around those word sizes, among plain and non-ASCII text.
    @Test func anEscapeAnywhereInALongStringIsWritten() throws {
        let awkward: [Unicode.Scalar] = (0..<0x20).map { Unicode.Scalar(UInt8($0)) } + ["\"", "\\", "\u{7F}", "é", "😀", " ", "~"]
        for length in [7, 8, 9, 15, 16, 17, 33] {
            for position in 0..<length {
                for character in awkward {
                    var scalars = (0..<length).map { Unicode.Scalar(UInt8(ascii: "a") + UInt8($0 % 26)) }
                    scalars[position] = character
                    let record = TagRecord(type: .frame, origin: TagOrigin(source: String(String.UnicodeScalarView(scalars))), pts: nil)
                    var output: [UInt8] = []
                    record.appendJSON(to: &output)
                    #expect(Data(output) == (try Self.encoder.encode(record)), "\(length) \(position) \(character.value)")
                }
            }
        }
    }

    /// A meter's delivery records (serve writes a thousand a second) are written the same way:
    /// every optional field present or absent, awkward strings, envelopes of every shape.
    @Test func deliveryRecordsAreByteForByteTheEncoders() throws {
        var random = SeededRandom(seed: 20261129)
        func text() -> String? { random.next() % 4 == 0 ? nil : Self.awkward(&random, length: Int(random.next() % 40)) }
        func number() -> Int? { random.next() % 3 == 0 ? nil : Int(Int64(bitPattern: random.next()) >> Int64(random.next() % 63)) }
        for _ in 0..<10_000 {
            var delivery = MeterRecord.Delivery(payload: Self.awkward(&random, length: Int(random.next() % 300)),
                                                tagID: Self.awkward(&random, length: 16), source: Self.awkward(&random, length: 20))
            delivery.pts = number().map(Int64.init)
            (delivery.mediaSequence, delivery.discontinuitySequence) = (number(), number())
            (delivery.segment, delivery.programDateTime, delivery.period, delivery.representation) = (text(), text(), text(), text())
            (delivery.segmentTime, delivery.program, delivery.pid) = (number(), number(), number())
            delivery.interstitial = text()
            // Times as a clock gives them, whole seconds, small ones, and ones that are no number.
            let sentAt = [Double(random.next() % 4_000_000_000_000) / 1000, Double(random.next() % 4_000_000_000), 0.5,
                          .nan, .infinity][Int(random.next() % 5)]
            let record = MeterRecord(sentAt: sentAt, channel: text(), meter: text(), .delivery(delivery))
            let line = Data(record.jsonLine)
            let expected = (try? Self.encoder.encode(record)) ?? Data("{}".utf8)
            #expect(line == expected)
            if line != expected { return }
        }
    }
}
