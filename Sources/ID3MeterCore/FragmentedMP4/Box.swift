/// An ISO BMFF box (ISO/IEC 14496-12 §4.2): its four-character type and where its content
/// lies in the bytes it was read from.
struct Box {
    var type: String
    var content: Range<Int>

    /// The boxes laid end to end in `range`; stops at the first one that does not fit.
    static func children(of bytes: [UInt8], in range: Range<Int>) -> [Box] {
        var boxes: [Box] = []
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            var reader = ByteReader(bytes, from: offset, to: range.upperBound)
            guard var size = reader.readInt(4), reader.skip(4) else { break }
            var header = 8
            if size == 1 {
                guard let large = reader.readInt(8) else { break }
                size = large
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header, size <= range.upperBound - offset else { break }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            boxes.append(Box(type: type, content: offset + header..<offset + size))
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
