/// One JSON object written field by field in the order given, bytes exactly as `JSONEncoder`
/// with `.sortedKeys` and `.withoutEscapingSlashes` writes them when the fields come in key
/// order: the scan writes one per tag, and the encoder's reflection, key sorting and boxing
/// cost far more than the tag took to find. `JSONLineTests` holds it to the encoder.
struct JSONLine {
    private var bytes: [UInt8] = []
    /// Where this object starts in `bytes`.
    private let start: Int

    /// An object written at the end of `output`, which holds nothing until `close(into:)`
    /// gives the bytes back: they are moved, never copied.
    init(appendingTo output: inout [UInt8]) {
        swap(&bytes, &output)
        start = bytes.count
        bytes.append(UInt8(ascii: "{"))
    }

    /// Closes the object and hands `output` back with it at the end: the last call. (Mutating,
    /// not consuming: a consuming method of a copyable value got a copy of the buffer to append to.)
    mutating func close(into output: inout [UInt8]) {
        bytes.append(UInt8(ascii: "}"))
        swap(&bytes, &output)
    }

    mutating func add(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        begin(key)
        appendQuoted(value)
    }

    mutating func add(_ key: StaticString, _ value: (some BinaryInteger)?) {
        guard let value else { return }
        begin(key)
        appendDecimal(Int64(value))
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
        if bytes.count > start + 1 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        append(key)
        append("\":")
    }

    private mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// The digits of `value`, as `String(value)` has them, without making the string.
    private mutating func appendDecimal(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        // Runs of bytes that need no escape (a whole payload, mostly) go in one copy; they are
        // found eight bytes at a time.
        value.withUTF8 { utf8 in
            var start = 0
            var index = 0
            while index < utf8.count {
                if utf8.count - index >= 8 {
                    let word = UnsafeRawPointer(utf8.baseAddress! + index).loadUnaligned(as: UInt64.self)
                    if !Self.mayNeedEscape(word) {
                        index += 8
                        continue
                    }
                }
                let byte = utf8[index]
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                    appendEscaped(byte)
                    start = index + 1
                }
                index += 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether any of the eight bytes in `word` is a control character, a quote or a backslash
    /// (the bit tricks of "Determine if a word has a byte less than n" and "has a zero byte";
    /// they may say yes for a word without one, never no for a word with one).
    private static func mayNeedEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ x: UInt64) -> Bool { (x &- ones) & ~x & highs != 0 }
        let control = (word &- ones &* 0x20) & ~word & highs != 0
        return control || hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\"")))) || hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
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
