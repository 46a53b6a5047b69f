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

    static func record(_ random: inout SeededRandom) -> TagRecord {
        var record = TagRecord.all(for: .malformed(ID3ParseError(reason: "x", offset: 0), pts: 0,
                                                       origin: TagOrigin(source: "s")), allFrames: false)[0]
        func text() -> String? { random.next() % 5 == 0 ? nil : awkward(&random, length: Int(random.next() % 12)) }
        func number() -> Int? { random.next() % 4 == 0 ? nil : Int(Int64(bitPattern: random.next()) >> Int64(random.next() % 63)) }
        record.type = [.nielsen, .frame, .malformed][Int(random.next() % 3)]
        record.source = awkward(&random, length: 8)
        record.segment = text()
        record.mediaSequence = number()
        record.discontinuitySequence = number()
        record.pts = number().map(Int64.init)
        // Times as a scan makes them (PTS / 90 kHz, 33 bits), and a few others.
        let ticks = Double(random.next() % (1 << 33))
        record.time = [nil, 0, 1 / 90_000, ticks / 90_000, ticks, 1e-7 * ticks, 2.5, 1e21][Int(random.next() % 8)]
        record.programDateTime = text()
        record.payload = text()
        record.pcCID = text()
        record.fdCID = text()
        record.pcOffset = text()
        record.fdOffset = text()
        record.breakout = text()
        record.valid = random.next() % 3 == 0 ? nil : random.next() % 2 == 0
        record.placeholderPCCID = random.next() % 3 == 0 ? nil : random.next() % 2 == 0
        record.issues = random.next() % 3 == 0 ? nil : (0..<Int(random.next() % 3)).compactMap { _ in text() }
        record.frame = text()
        record.owner = text()
        record.size = number()
        record.id3Version = text()
        record.reason = text()
        record.notes = random.next() % 3 == 0 ? nil : (0..<Int(random.next() % 3)).compactMap { _ in text() }
        return record
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
                    var random = SeededRandom(seed: UInt64(length * 1000 + position))
                    var record = Self.record(&random)
                    record.payload = String(String.UnicodeScalarView(scalars))
                    var output: [UInt8] = []
                    record.appendJSON(to: &output)
                    #expect(Data(output) == (try Self.encoder.encode(record)), "\(length) \(position) \(character.value)")
                }
            }
        }
    }
}
