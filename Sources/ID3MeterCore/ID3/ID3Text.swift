/// ID3 text encodings (ID3v2.4 §4): the byte before a text says how to read it.
enum ID3Text {
    /// Splits `bytes` at the encoding's terminators (one zero byte, or two aligned ones
    /// for UTF-16) and decodes each piece. A missing final terminator is tolerated.
    static func strings(_ bytes: ArraySlice<UInt8>, encoding: UInt8) -> [String] {
        let width = isUTF16(encoding) ? 2 : 1
        var strings: [String] = []
        var start = bytes.startIndex
        var index = start
        while index + width <= bytes.endIndex {
            if bytes[index] == 0 && (width == 1 || bytes[index + 1] == 0) {
                strings.append(decode(bytes[start..<index], encoding: encoding))
                start = index + width
            }
            index += width
        }
        if start < bytes.endIndex { strings.append(decode(bytes[start...], encoding: encoding)) }
        return strings
    }

    static func decode(_ bytes: ArraySlice<UInt8>, encoding: UInt8) -> String {
        switch encoding {
        case 1: return utf16(bytes, bigEndianWithoutBOM: false)
        case 2: return utf16(bytes, bigEndianWithoutBOM: true)
        case 3: return String(decoding: bytes, as: UTF8.self)
        default: return latin1(bytes)
        }
    }

    /// ISO-8859-1 maps each byte to the Unicode scalar of the same value; ASCII, the usual
    /// case (Nielsen's owner strings), is also valid UTF-8 and decodes in one pass.
    static func latin1(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.withUnsafeBufferPointer { bytes in
            if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
            var scalars = String.UnicodeScalarView()
            scalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
            return String(scalars)
        }
    }

    /// No byte has its high bit set; eight bytes at a time (every tag's owner goes through here).
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while bytes.count - index >= 8 {
            let word = UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)
            if word & 0x8080_8080_8080_8080 != 0 { return false }
            index += 8
        }
        return bytes[index...].allSatisfy { $0 < 0x80 }
    }

    private static func isUTF16(_ encoding: UInt8) -> Bool { encoding == 1 || encoding == 2 }

    private static func utf16(_ bytes: ArraySlice<UInt8>, bigEndianWithoutBOM: Bool) -> String {
        var body = bytes
        var bigEndian = true
        if !bigEndianWithoutBOM, body.count >= 2 {
            let bom = (body[body.startIndex], body[body.startIndex + 1])
            if bom == (0xFF, 0xFE) { bigEndian = false; body = body.dropFirst(2) }
            else if bom == (0xFE, 0xFF) { body = body.dropFirst(2) }
        }
        var units: [UInt16] = []
        units.reserveCapacity(body.count / 2)
        var index = body.startIndex
        while index + 1 < body.endIndex {
            let first = UInt16(body[index]), second = UInt16(body[index + 1])
            units.append(bigEndian ? first << 8 | second : second << 8 | first)
            index += 2
        }
        return String(decoding: units, as: UTF16.self)
    }
}
