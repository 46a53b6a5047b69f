/// An ISO BMFF box (ISO/IEC 14496-12 §4.2): its four-character type and where its content
/// lies in the bytes it was read from.
struct Box {
    var type: String
    var content: Range<Int>

    /// The boxes laid end to end in `range`; stops at the first one that does not fit.
    static func children(of bytes: [UInt8], in range: Range<Int>) -> [Box] {
        var boxes: [Box] = []
        var offset = range.lowerBound
        while let header = Header(bytes, at: offset, end: range.upperBound) {
            let size = header.size ?? range.upperBound - offset
            guard size >= header.length, size <= range.upperBound - offset else { break }
            boxes.append(Box(type: header.type, content: offset + header.length..<offset + size))
            offset += size
        }
        return boxes
    }

    static func children(of bytes: [UInt8]) -> [Box] { children(of: bytes, in: 0..<bytes.count) }

    /// The children of this box, which holds only boxes.
    func children(in bytes: [UInt8]) -> [Box] { Box.children(of: bytes, in: content) }

    func child(_ type: String, in bytes: [UInt8]) -> Box? { children(in: bytes).first { $0.type == type } }

    /// A reader over a full box's fields, after its version (returned) and flags.
    func fullBoxFields(in bytes: [UInt8]) -> (version: UInt8, reader: ByteReader)? {
        var reader = ByteReader(bytes, from: content.lowerBound, to: content.upperBound)
        guard let version = reader.readByte(), reader.skip(3) else { return nil }
        return (version, reader)
    }
}

extension Box {
    /// A box's size and type from its first bytes (ISO/IEC 14496-12 §4.2): how every box here
    /// is told, whole in memory or arriving in pieces.
    struct Header {
        var type: String
        /// Header bytes: 8, or 16 with a 64-bit size.
        var length: Int
        /// `nil`: the box runs to the end of the bytes.
        var size: Int?

        /// The header of the box at `offset`, from the bytes before `end` (all of them when
        /// `nil`); `nil` when they do not hold it whole.
        init?(_ bytes: [UInt8], at offset: Int = 0, end: Int? = nil) {
            let end = end ?? bytes.count
            guard end - offset >= 8 else { return nil }
            var reader = ByteReader(bytes, from: offset, to: end)
            guard let size32 = reader.readInt(4), reader.skip(4) else { return nil }
            type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            switch size32 {
            case 0: (length, size) = (8, nil)
            case 1:
                guard let large = reader.readInt(8) else { return nil }
                (length, size) = (16, large)
            default: (length, size) = (8, size32)
            }
        }
    }
}
