/// One JSON object written field by field in the order given, bytes exactly as `JSONEncoder`
/// with `.sortedKeys` and `.withoutEscapingSlashes` writes them when the fields come in key
/// order: the scan writes one per tag, and the encoder's reflection, key sorting and boxing
/// cost far more than the tag took to find. `JSONLineTests` holds it to the encoder.
///
/// The pieces (about fifty a line) are copied into a scratch buffer and reach the output in one
/// append when it fills or the object closes: each append to an array checks its uniqueness
/// and capacity, and those checks had cost more than the copying.
package struct JSONLine: ~Copyable {
    private var bytes: [UInt8] = []
    private let scratch: UnsafeMutableBufferPointer<UInt8>
    private var used = 0
    private var hasField = false

    /// Writes `body`'s object at the end of `output`, through a scratch buffer of its own.
    package static func write(appendingTo output: inout [UInt8], _ body: (inout JSONLine) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { scratch in
            var line = JSONLine(appendingTo: &output, scratch: scratch)
            body(&line)
            line.close(into: &output)
        }
    }

    /// Writes a JSON array at the end of `output`: an object for each of `elements`, its fields
    /// written by `body` (a report's days: the report's JSON, `CoverageReport.json`).
    package static func writeArray<S: Sequence>(appendingTo output: inout [UInt8], _ elements: S,
                                                _ body: (inout JSONLine, S.Element) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4096) { scratch in
            var line = JSONLine(appendingTo: &output, scratch: scratch, opening: UInt8(ascii: "["))
            line.putObjects(elements, body)
            line.close(into: &output, closing: UInt8(ascii: "]"))
        }
    }

    /// `output` is moved in and out, never copied.
    private init(appendingTo output: inout [UInt8], scratch: UnsafeMutableBufferPointer<UInt8>, opening: UInt8 = UInt8(ascii: "{")) {
        self.scratch = scratch
        swap(&bytes, &output)
        put(opening)
    }

    private mutating func close(into output: inout [UInt8], closing: UInt8 = UInt8(ascii: "}")) {
        put(closing)
        flush()
        swap(&bytes, &output)
    }

    /// An object as `key`'s value, its fields written by `body` in key order.
    package mutating func object(_ key: StaticString, _ body: (inout JSONLine) -> Void) {
        begin(key)
        putObject(body)
    }

    /// An array of objects as `key`'s value, one for each of `elements`.
    package mutating func objects<S: Sequence>(_ key: StaticString, _ elements: S, _ body: (inout JSONLine, S.Element) -> Void) {
        begin(key)
        put(UInt8(ascii: "["))
        putObjects(elements, body)
        put(UInt8(ascii: "]"))
    }

    private mutating func putObjects<S: Sequence>(_ elements: S, _ body: (inout JSONLine, S.Element) -> Void) {
        var first = true
        for element in elements {
            if !first { put(UInt8(ascii: ",")) }
            first = false
            putObject { body(&$0, element) }
        }
    }

    private mutating func putObject(_ body: (inout JSONLine) -> Void) {
        put(UInt8(ascii: "{"))
        let outer = hasField
        hasField = false
        body(&self)
        hasField = outer
        put(UInt8(ascii: "}"))
    }

    package mutating func add(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        begin(key)
        putQuoted(value)
    }

    /// UTF-8 bytes, written as the string they spell.
    package mutating func add(_ key: StaticString, _ utf8: UnsafeBufferPointer<UInt8>?) {
        guard let utf8 else { return }
        begin(key)
        putQuoted(utf8)
    }

    package mutating func add(_ key: StaticString, _ value: (some BinaryInteger)?) {
        guard let value else { return }
        begin(key)
        putDecimal(Int64(value))
    }

    package mutating func add(_ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        begin(key)
        if value { put("true") } else { put("false") }
    }

    /// A finite double, as the encoder writes it: Swift's shortest round-trip digits, without a
    /// trailing ".0".
    package mutating func add(_ key: StaticString, _ value: Double?) {
        guard let value, value.isFinite else { return }
        begin(key)
        var digits = value.description
        if digits.hasSuffix(".0") { digits.removeLast(2) }
        digits.withUTF8 { put($0) }
    }

    package mutating func add(_ key: StaticString, _ values: [String]?) {
        guard let values else { return }
        begin(key)
        put(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { put(UInt8(ascii: ",")) }
            putQuoted(value)
        }
        put(UInt8(ascii: "]"))
    }

    @inline(__always)
    private mutating func begin(_ key: StaticString) {
        if hasField { put(UInt8(ascii: ",")) }
        hasField = true
        put(UInt8(ascii: "\""))
        put(key)
        put("\":")
    }

    // MARK: Writing

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        if used == scratch.count { flush() }
        scratch[used] = byte
        used += 1
    }

    @inline(__always)
    private mutating func put(_ text: StaticString) {
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    private mutating func put(_ piece: UnsafeBufferPointer<UInt8>) {
        guard !piece.isEmpty else { return }
        if scratch.count - used < piece.count {
            flush()
            guard piece.count <= scratch.count else { return bytes.append(contentsOf: piece) }
        }
        UnsafeMutableRawPointer(scratch.baseAddress! + used).copyMemory(from: piece.baseAddress!, byteCount: piece.count)
        used += piece.count
    }

    private mutating func flush() {
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<used]))
        used = 0
    }

    /// The digits of `value`, as `String(value)` has them, without making the string.
    private mutating func putDecimal(_ value: Int64) {
        if value < 0 { put(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            put(UnsafeBufferPointer(rebasing: digits[first...]))
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private mutating func putQuoted(_ value: String) {
        var value = value
        value.withUTF8 { putQuoted($0) }
    }

    private mutating func putQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        put(UInt8(ascii: "\""))
        // Runs of bytes that need no escape (a whole payload, mostly) go in one copy; they are
        // found eight bytes at a time.
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
                put(UnsafeBufferPointer(rebasing: utf8[start..<index]))
                putEscaped(byte)
                start = index + 1
            }
            index += 1
        }
        put(UnsafeBufferPointer(rebasing: utf8[start...]))
        put(UInt8(ascii: "\""))
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
    private mutating func putEscaped(_ byte: UInt8) {
        put(UInt8(ascii: "\\"))
        switch byte {
        case 0x08: put(UInt8(ascii: "b"))
        case 0x0C: put(UInt8(ascii: "f"))
        case 0x0A: put(UInt8(ascii: "n"))
        case 0x0D: put(UInt8(ascii: "r"))
        case 0x09: put(UInt8(ascii: "t"))
        case 0..<0x20:
            put("u00")
            put(Self.hex[Int(byte >> 4)])
            put(Self.hex[Int(byte & 0xF)])
        default: put(byte)
        }
    }
}
