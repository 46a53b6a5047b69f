import Foundation
import ID3Meter
import ID3MeterReport

/// A posted batch (`{"batch", "meter_version", "records"}`) read in one pass over its bytes: each
/// record is cut out as the meter wrote it (whitespace between tokens left out) and decoded on
/// its own, so that the body is never a tree of objects (a 16 MB batch of tiny records was 2 GB
/// that way). What the collector keeps of a record is its JSON, every field, and its keys.
///
/// The checks a record passes here are the collector's rules for what it keeps: a time a report
/// can place, channel and meter names without U+0000 (a database reads a name up to it) and in
/// NFC, so that two spellings of one name are one channel.
package struct BatchBody {
    /// Nesting deeper than this is refused: no record needs it, and a scan of it is bounded.
    static let maximumDepth = 64

    private let bytes: UnsafeRawBufferPointer
    private var offset = 0
    /// Where the scan copies the value it passes over, when it does: a record's JSON.
    private var copy: [UInt8]?
    /// The top-level fields of the record being copied, where they lie in `copy`.
    private var fields: [FlatRecordDecoder.Field] = []

    private init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The batch in `body`, posted by `caller`; a description of the first thing wrong.
    package static func batch(in body: UnsafeRawBufferPointer, by caller: String, at receivedAt: Double) throws(StoreError) -> CollectedBatch {
        var reader = BatchBody(body)
        do {
            return try reader.batch(by: caller, at: receivedAt)
        } catch let failure as Failure {
            throw StoreError(failure.description)
        } catch {
            throw StoreError("\(error)")
        }
    }

    /// Why a body is not a batch: words for the meter's dead-letter file and the operator.
    struct Failure: Error, CustomStringConvertible {
        var description: String

        init(_ description: String) { self.description = description }

        static func syntax(at offset: Int, expected: String) -> Failure {
            Failure("not JSON: \(expected) expected at byte \(offset)")
        }
    }

    private mutating func batch(by caller: String, at receivedAt: Double) throws -> CollectedBatch {
        var id: String?, version: String?, records: [CollectedRecord]?
        try expect(UInt8(ascii: "{"), "an object")
        var first = true
        while true {
            skipWhitespace()
            if peek == UInt8(ascii: "}") && first { offset += 1; break }
            let key = try string()
            try expect(UInt8(ascii: ":"), "':'")
            skipWhitespace()
            switch key {
            case "batch", "meter_version", "records":
                guard (key == "batch" ? id : key == "meter_version" ? version : records.map { _ in "" }) == nil else {
                    throw Failure("\"\(key)\" is given twice")
                }
                if key == "records" { records = try self.records() } else {
                    guard peek == UInt8(ascii: "\"") else { throw Failure("\"\(key)\" must be a string") }
                    let value = try string()
                    if key == "batch" { id = value } else { version = value }
                }
            default:
                try skip(depth: 1)
            }
            first = false
            skipWhitespace()
            if peek == UInt8(ascii: ",") { offset += 1; continue }
            try expect(UInt8(ascii: "}"), "',' or '}'")
            break
        }
        skipWhitespace()
        guard offset == bytes.count else { throw Failure.syntax(at: offset, expected: "the end") }
        guard let id, !id.isEmpty, let records else { throw Failure("an object with a \"batch\" id and \"records\" is expected") }
        return CollectedBatch(id: id, meterVersion: version ?? "", records: records, receivedAt: receivedAt, postedBy: caller)
    }

    /// The `records` array, each element decoded and checked.
    private mutating func records() throws -> [CollectedRecord] {
        guard peek == UInt8(ascii: "[") else { throw Failure("\"records\" must be an array of records") }
        offset += 1
        var records: [CollectedRecord] = []
        let decoder = JSONDecoder()
        skipWhitespace()
        if peek == UInt8(ascii: "]") { offset += 1; return records }
        while true {
            skipWhitespace()
            guard peek == UInt8(ascii: "{") else { throw Failure("record \(records.count): not an object") }
            copy = []
            fields.removeAll(keepingCapacity: true)
            try skip(depth: 1)
            records.append(try Self.record(copy ?? [], fields: fields, index: records.count, decoder: decoder))
            copy = nil
            skipWhitespace()
            if peek == UInt8(ascii: ",") { offset += 1; continue }
            try expect(UInt8(ascii: "]"), "',' or ']'")
            return records
        }
    }

    /// The record whose JSON is `json`, kept as sent unless a name had to be put in NFC.
    private static func record(_ json: [UInt8], fields: [FlatRecordDecoder.Field], index: Int, decoder: JSONDecoder) throws -> CollectedRecord {
        var record: MeterRecord
        if let plain = FlatRecordDecoder.record(json, fields: fields) {
            record = plain
        } else {
            do {
                record = try decoder.decode(MeterRecord.self, from: Data(json))
            } catch let error as DecodingError {
                throw Failure("record \(index): \(Self.misfit(json, decoder: decoder) ?? Self.words(error))")
            }
        }
        // A time no meter makes (a clock's garbage, a hostile post) would be a minute no report
        // can place: the batch is refused, and the meter dead-letters it.
        guard CoverageMinute.times.contains(record.sentAt) else {
            throw Failure("record \(index): sent_at \(record.sentAt) is not a time from 1970 to 2100")
        }
        var renamed: [String: String] = [:]
        for (key, name) in [("channel", record.channel), ("meter", record.meter)] {
            guard let name else { continue }
            guard !name.utf8.contains(0) else { throw Failure("record \(index): \(key) holds U+0000") }
            // ASCII is in NFC already: the normalisation's cost is for the names that need it.
            guard !name.utf8.allSatisfy({ $0 < 0x80 }) else { continue }
            let normal = name.precomposedStringWithCanonicalMapping
            if !normal.unicodeScalars.elementsEqual(name.unicodeScalars) { renamed[key] = normal }
        }
        guard !renamed.isEmpty else { return CollectedRecord(record: record, json: String(decoding: json, as: UTF8.self)) }
        record.channel = renamed["channel"] ?? record.channel
        record.meter = renamed["meter"] ?? record.meter
        // Rare (a name not in NFC): the object is rebuilt with the names changed, every other field as sent.
        guard var fields = try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else { throw Failure("record \(index): not an object") }
        fields.merge(renamed) { $1 }
        let rewritten = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes])
        return CollectedRecord(record: record, json: String(decoding: rewritten, as: UTF8.self))
    }

    /// A decoding error as a line: the field, and what is wrong with it.
    static func words(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context, _ key: CodingKey? = nil) -> String {
            let keys = (context.codingPath + (key.map { [$0] } ?? [])).map(\.stringValue)
            return keys.isEmpty ? "the record" : keys.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context, key)) is missing"
        case .valueNotFound(let type, let context): return "\(path(context)) is null, not \(Self.kind(type))"
        case .typeMismatch(let type, let context): return "\(path(context)) is not \(Self.kind(type))"
        // The scan found the JSON valid: what the decoder calls "not valid JSON" is a number too big for its field.
        case .dataCorrupted(let context) where context.codingPath.isEmpty: return "a number does not fit its field"
        case .dataCorrupted(let context): return "\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    /// The number that does not fit its field (`1.5` for an integer, `1e400`), named: JSONDecoder
    /// says only "not valid JSON" of it, with no field, once the scan has found the JSON valid.
    /// The field is the first numeric one that, set to 0, lets the record decode past it.
    private static func misfit(_ json: [UInt8], decoder: JSONDecoder) -> String? {
        func numberFailure(_ data: Data) -> Bool {
            do { _ = try decoder.decode(MeterRecord.self, from: data) } catch DecodingError.dataCorrupted(let context) {
                return context.codingPath.isEmpty
            } catch {}
            return false
        }
        guard numberFailure(Data(json)), let fields = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else { return nil }
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            guard let number = value as? NSNumber, !(value is Bool) else { continue }
            var changed = fields
            changed[key] = 0
            guard let data = try? JSONSerialization.data(withJSONObject: changed), !numberFailure(data) else { continue }
            return "\(key): \(number) does not fit the field (a whole number, or a smaller one, is expected)"
        }
        return nil
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Double.Type: "a number"
        case is Int.Type, is Int64.Type: "an integer"
        default: "\(type)"
        }
    }

    // MARK: The scan

    private var peek: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func skipWhitespace() {
        while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { offset += 1 }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws {
        skipWhitespace()
        guard peek == byte else { throw Failure.syntax(at: offset, expected: what) }
        offset += 1
    }

    /// A string at `offset`, decoded (escapes and all).
    private mutating func string() throws -> String {
        skipWhitespace()
        guard peek == UInt8(ascii: "\"") else { throw Failure.syntax(at: offset, expected: "a string") }
        let start = offset
        try skipString()
        let sink = Array(bytes[start..<offset])
        guard let text = String(validating: sink, as: UTF8.self) else { throw Failure("the string at byte \(start) is not UTF-8") }
        guard sink.contains(UInt8(ascii: "\\")) else { return String(text.dropFirst().dropLast()) }
        do { return try JSONDecoder().decode(String.self, from: Data(sink)) } catch { throw Failure("the string at byte \(start) is not JSON") }
    }

    /// Passes over the value at `offset`, copying its bytes but the whitespace between tokens
    /// to `copy` when it is set; nesting past `maximumDepth` is refused.
    private mutating func skip(depth: Int) throws {
        skipWhitespace()
        guard let byte = peek else { throw Failure.syntax(at: offset, expected: "a value") }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth <= Self.maximumDepth else { throw Failure("nested deeper than \(Self.maximumDepth) at byte \(offset)") }
            let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            offset += 1
            copy?.append(byte)
            skipWhitespace()
            if peek == close {
                offset += 1
                copy?.append(close)
                return
            }
            while true {
                skipWhitespace()
                let key = copy?.count
                if byte == UInt8(ascii: "{") {
                    guard peek == UInt8(ascii: "\"") else { throw Failure.syntax(at: offset, expected: "a key") }
                    try skipString()
                    try expect(UInt8(ascii: ":"), "':'")
                    copy?.append(UInt8(ascii: ":"))
                }
                let value = copy?.count
                try skip(depth: depth + 1)
                if depth == 1, byte == UInt8(ascii: "{"), fields.count <= FlatRecordDecoder.maximumFields, let key, let value, let end = copy?.count {
                    fields.append(FlatRecordDecoder.Field(key: key..<value - 1, value: value..<end))
                }
                skipWhitespace()
                guard let next = peek, next == UInt8(ascii: ",") || next == close else {
                    throw Failure.syntax(at: offset, expected: "',' or '\(Character(Unicode.Scalar(close)))'")
                }
                offset += 1
                copy?.append(next)
                if next == close { return }
            }
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            let word = byte == UInt8(ascii: "t") ? "true" : byte == UInt8(ascii: "f") ? "false" : "null"
            guard bytes.count - offset >= word.utf8.count, bytes[offset..<offset + word.utf8.count].elementsEqual(word.utf8) else {
                throw Failure.syntax(at: offset, expected: "a value")
            }
            copy?.append(contentsOf: word.utf8)
            offset += word.utf8.count
        default:
            try skipNumber()
        }
    }

    /// Passes over a string (RFC 8259: escapes checked, no raw control character), copying it whole.
    private mutating func skipString() throws {
        let start = offset
        offset += 1
        while let byte = peek {
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                copy?.append(contentsOf: bytes[start..<offset])
                return
            case UInt8(ascii: "\\"):
                guard let escaped = peek else { break }
                if escaped == UInt8(ascii: "u") {
                    guard bytes.count - offset > 4, bytes[(offset + 1)...(offset + 4)].allSatisfy({ $0.isHexDigit }) else {
                        throw Failure.syntax(at: offset, expected: "four hex digits")
                    }
                    offset += 5
                } else {
                    guard Array("\"\\/bfnrt".utf8).contains(escaped) else { throw Failure.syntax(at: offset, expected: "an escape") }
                    offset += 1
                }
            case 0..<0x20:
                throw Failure("a control character in the string at byte \(start)")
            default:
                continue
            }
        }
        throw Failure.syntax(at: offset, expected: "the string's end")
    }

    private mutating func skipNumber() throws {
        let start = offset
        func digits() -> Int {
            let from = offset
            while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { offset += 1 }
            return offset - from
        }
        if peek == UInt8(ascii: "-") { offset += 1 }
        guard digits() > 0 else { throw Failure.syntax(at: start, expected: "a value") }
        if peek == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw Failure.syntax(at: offset, expected: "a digit") }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            offset += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { offset += 1 }
            guard digits() > 0 else { throw Failure.syntax(at: offset, expected: "a digit") }
        }
        copy?.append(contentsOf: bytes[start..<offset])
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
