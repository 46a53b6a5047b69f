import ID3Meter

/// A record decoded from the fields `BatchBody`'s scan found in it: its `Decodable` init
/// (`MeterRecord.init(from:)`, the one definition of what a record is) run over the top-level
/// values as they lie in the bytes, rather than over JSONDecoder's tree of the object, built anew
/// for every record: that was half of the collector's time at a fleet's rate (docs/PERFORMANCE.md).
///
/// It reads the plain cases alone, the ones a meter writes: strings without escapes, whole
/// numbers as integers, finite numbers, `true`, `false` and `null`, each key once. Anything else
/// is not decoded here (`nil`): JSONDecoder decodes it, or says what is wrong with it. So a
/// record is never kept that JSONDecoder, which reads it back in a report, would refuse.
struct FlatRecordDecoder: Decoder {
    /// Where a top-level key and its value lie in the record's bytes.
    struct Field {
        var key: Range<Int>
        var value: Range<Int>
    }

    /// Not a plain case: JSONDecoder takes the record.
    struct NotPlain: Error {}

    /// More top-level fields than this and the record is not plain: a key is found by a walk
    /// over the fields, fine for a meter's dozen and quadratic for a hostile post's thousands.
    /// The scan stops noting fields one past it.
    static let maximumFields = 64

    private let bytes: [UInt8]
    private let fields: [Field]

    /// The record in `bytes` (an object, whitespace left out) whose top-level `fields` the scan
    /// found; `nil` when it is not made of plain cases, or does not decode.
    static func record(_ bytes: [UInt8], fields: [Field]) -> MeterRecord? {
        guard fields.count <= maximumFields else { return nil }
        for (index, field) in fields.enumerated() {
            // A key or a value with an escape, or a key given twice: JSONDecoder's way with it is
            // its own. (A value's escape is refused here, not where it is read: a custom record
            // reads its other fields with `try?`, and would keep the record without that field;
            // fuzz/regressions/records/custom-escaped-field.json.)
            guard !bytes[field.key].contains(UInt8(ascii: "\\")), !bytes[field.value].contains(UInt8(ascii: "\\")),
                  !fields[..<index].contains(where: { bytes[$0.key].elementsEqual(bytes[field.key]) }) else { return nil }
        }
        return try? MeterRecord(from: FlatRecordDecoder(bytes: bytes, fields: fields))
    }

    private init(bytes: [UInt8], fields: [Field]) {
        self.bytes = bytes
        self.fields = fields
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Container<Key>(bytes: bytes, fields: fields))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw NotPlain() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw NotPlain() }

    private struct Container<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let bytes: [UInt8]
        let fields: [Field]

        var codingPath: [any CodingKey] { [] }

        var allKeys: [Key] {
            fields.compactMap { field in
                String(validating: bytes[field.key.dropFirst().dropLast()], as: UTF8.self).flatMap { Key(stringValue: $0) }
            }
        }

        func contains(_ key: Key) -> Bool { value(key) != nil }

        /// The bytes of `key`'s value.
        private func value(_ key: Key) -> ArraySlice<UInt8>? {
            let name = key.stringValue.utf8
            for field in fields where field.key.count == name.count + 2 && bytes[field.key.dropFirst().dropLast()].elementsEqual(name) {
                return bytes[field.value]
            }
            return nil
        }

        private func required(_ key: Key) throws -> ArraySlice<UInt8> {
            guard let value = value(key) else { throw NotPlain() }
            return value
        }

        func decodeNil(forKey key: Key) throws -> Bool { try required(key).elementsEqual("null".utf8) }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            let value = try required(key)
            if value.elementsEqual("true".utf8) { return true }
            if value.elementsEqual("false".utf8) { return false }
            throw NotPlain()
        }

        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            let value = try required(key)
            guard value.count >= 2, value.first == UInt8(ascii: "\""), !value.contains(UInt8(ascii: "\\")),
                  let text = String(validating: value.dropFirst().dropLast(), as: UTF8.self) else { throw NotPlain() }
            return text
        }

        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            // The scan let only JSON numbers through; one too big for a Double is not plain.
            guard let number = Double(try number(key)), number.isFinite else { throw NotPlain() }
            return number
        }

        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            // Digits alone: a fraction or an exponent is JSONDecoder's to judge.
            let text = try number(key)
            guard !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let number = Int(text) else { throw NotPlain() }
            return number
        }

        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { Int64(try decode(Int.self, forKey: key)) }

        /// A number's text; one with a leading zero (`01`), which the scan lets by and JSON does not, is not plain.
        private func number(_ key: Key) throws -> String {
            let value = try required(key)
            let digits = value.first == UInt8(ascii: "-") ? value.dropFirst() : value[...]
            guard let first = digits.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first),
                  first != UInt8(ascii: "0") || digits.count == 1 || !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digits[digits.startIndex + 1]) else {
                throw NotPlain()
            }
            return String(decoding: value, as: UTF8.self)
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            // The kinds a record's fields are; no record nests another type.
            switch type {
            case is String.Type: try decode(String.self, forKey: key) as! T
            case is Double.Type: try decode(Double.self, forKey: key) as! T
            case is Int.Type: try decode(Int.self, forKey: key) as! T
            case is Int64.Type: try decode(Int64.self, forKey: key) as! T
            case is Bool.Type: try decode(Bool.self, forKey: key) as! T
            default: throw NotPlain()
            }
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw NotPlain()
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw NotPlain() }
        func superDecoder() throws -> any Decoder { throw NotPlain() }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw NotPlain() }
    }
}
