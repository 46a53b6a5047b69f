/// One JSON object written field by field in the order given, bytes exactly as `JSONEncoder`
/// with `.sortedKeys` and `.withoutEscapingSlashes` writes them when the fields come in key
/// order: the scan writes one per tag, and the encoder's reflection, key sorting and boxing
/// cost far more than the tag took to find. `JSONLineTests` holds it to the encoder.
struct JSONLine {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]

    init() {
        bytes.reserveCapacity(512)
    }

    /// The object, closed: the last call.
    consuming func close() -> String {
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    mutating func add(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        begin(key)
        appendQuoted(value)
    }

    mutating func add(_ key: StaticString, _ value: (some BinaryInteger)?) {
        guard let value else { return }
        begin(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func add(_ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        begin(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// A finite double, as the encoder writes it: Swift's shortest round-trip digits, without a
    /// trailing ".0".
    mutating func add(_ key: StaticString, _ value: Double?) {
        guard let value, value.isFinite else { return }
        begin(key)
        var digits = value.description
        if digits.hasSuffix(".0") { digits.removeLast(2) }
        bytes.append(contentsOf: digits.utf8)
    }

    mutating func add(_ key: StaticString, _ values: [String]?) {
        guard let values else { return }
        begin(key)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendQuoted(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    private mutating func begin(_ key: StaticString) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: "\":".utf8)
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        // Runs of bytes that need no escape (a whole payload, mostly) go in one copy.
        value.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices where utf8[index] < 0x20 || utf8[index] == UInt8(ascii: "\"") || utf8[index] == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                appendEscaped(utf8[index])
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// One byte that must be escaped: a quote, a backslash or a control character.
    private mutating func appendEscaped(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0..<0x20: bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 0xF)]])
        default: bytes.append(byte)
        }
    }
}
