/// A bounds-checked cursor over bytes: every read past the end is a `nil`, never a trap,
/// so a short or lying buffer is an ordinary outcome for the parsers above it.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int
    let end: Int

    init(_ bytes: [UInt8], from offset: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        self.end = min(end ?? bytes.count, bytes.count)
        self.offset = min(max(offset, 0), self.end)
    }

    var remaining: Int { end - offset }
    var isAtEnd: Bool { offset >= end }

    func peek(_ index: Int = 0) -> UInt8? {
        let position = offset + index
        return position >= offset && position < end ? bytes[position] : nil
    }

    mutating func readByte() -> UInt8? {
        guard let byte = peek() else { return nil }
        offset += 1
        return byte
    }

    mutating func read(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= remaining else { return false }
        offset += count
        return true
    }

    /// Big-endian unsigned integer of `count` bytes (at most 8).
    mutating func readUInt(_ count: Int) -> UInt64? {
        guard count <= 8, let slice = read(count) else { return nil }
        return slice.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// ID3's sync-safe integer: 7 bits per byte, the top bit always clear (ID3v2.4 §6.2).
    mutating func readSyncSafe(_ count: Int) -> UInt64? {
        guard let slice = read(count), slice.allSatisfy({ $0 < 0x80 }) else { return nil }
        return slice.reduce(0) { $0 << 7 | UInt64($1) }
    }

    /// Big-endian unsigned integer of `count` bytes as an Int (clamped).
    mutating func readInt(_ count: Int) -> Int? { readUInt(count).map { Int(clamping: $0) } }

    /// A NUL-terminated UTF-8 string (ISO BMFF's `string`), the NUL consumed.
    mutating func readCString() -> String? {
        guard let length = bytes[offset..<end].firstIndex(of: 0).map({ $0 - offset }), let text = read(length) else { return nil }
        offset += 1
        return String(decoding: text, as: UTF8.self)
    }

    func rest() -> ArraySlice<UInt8> { bytes[offset..<end] }
}
