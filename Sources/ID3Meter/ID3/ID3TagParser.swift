/// Decodes one ID3v2 tag (ID3v2.2, v2.3 and v2.4 structure documents) from the bytes at
/// an offset. Every failure is a value with a reason; no input traps or reads out of bounds.
///
/// A strict parse accepts only the reading the spec prescribes. A tolerant one, if that
/// fails, also accepts what real writers get wrong: v2.4 frames with plain sizes, and
/// non-zero bytes in the padding.
enum ID3TagParser {
    static let headerLength = 10

    private enum HeaderFlag {
        static let unsynchronisation: UInt8 = 0x80
        static let extendedHeader: UInt8 = 0x40   // v2.2: compression
        static let footer: UInt8 = 0x10           // v2.4 only
    }

    static func hasHeader(_ bytes: [UInt8], at offset: Int) -> Bool {
        offset >= 0 && offset + 3 <= bytes.count
            && bytes[offset] == 0x49 && bytes[offset + 1] == 0x44 && bytes[offset + 2] == 0x33
    }

    /// The whole size the tag at `offset` declares (header, body and footer), from its first 10
    /// bytes; `nil` when they are not there or the size is not sync-safe.
    static func declaredByteCount(_ bytes: [UInt8], at offset: Int) -> Int? {
        guard hasHeader(bytes, at: offset), offset + headerLength <= bytes.count else { return nil }
        let sizeBytes = bytes[offset + 6..<offset + 10]
        guard sizeBytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        let footer = bytes[offset + 3] == 4 && bytes[offset + 5] & HeaderFlag.footer != 0 ? 10 : 0
        return headerLength + sizeBytes.reduce(0) { $0 << 7 | Int($1) } + footer
    }

    static func parse(_ bytes: [UInt8], at offset: Int, tolerant: Bool = true) -> Result<ID3Tag, ID3ParseError> {
        var header = ByteReader(bytes, from: offset)
        guard hasHeader(bytes, at: offset), header.skip(3) else {
            return .failure(ID3ParseError(reason: "no ID3 header", offset: offset))
        }
        guard let major = header.readByte(), let version = ID3Version(rawValue: major),
              let revision = header.readByte(), revision != 0xFF else {
            return .failure(ID3ParseError(reason: "unsupported ID3 version 2.\(bytes[min(offset + 3, bytes.count - 1)])", offset: offset + 3))
        }
        guard let flags = header.readByte(), let size = header.readSyncSafe(4) else {
            return .failure(ID3ParseError(reason: "tag header truncated or its size is not sync-safe", offset: offset + 5))
        }
        let footerLength = version == .v2_4 && flags & HeaderFlag.footer != 0 ? 10 : 0
        let byteCount = headerLength + Int(size) + footerLength
        guard byteCount <= bytes.count - offset else {
            return .failure(ID3ParseError(
                reason: "tag declares \(byteCount) bytes but only \(bytes.count - offset) are present", offset: offset))
        }
        let bodyStart = offset + headerLength
        var body = Array(bytes[bodyStart..<bodyStart + Int(size)])
        if version != .v2_4, flags & HeaderFlag.unsynchronisation != 0 {
            body = removeUnsynchronisation(body)
        }
        if version == .v2_2, flags & HeaderFlag.extendedHeader != 0 {
            return .failure(ID3ParseError(reason: "ID3v2.2 compressed tag (no scheme defined)", offset: offset))
        }
        let framesStart: Int
        switch extendedHeaderLength(body, version: version, flags: flags) {
        case .success(let length): framesStart = length
        case .failure(let error): return .failure(error.shifted(by: bodyStart))
        }
        return decodeFrames(body, from: framesStart, version: version, flags: flags, tolerant: tolerant)
            .map { frames, notes in
                ID3Tag(version: version, flags: flags, frames: frames, byteCount: byteCount, notes: notes)
            }
            .mapError { $0.shifted(by: bodyStart) }
    }

    private static func extendedHeaderLength(_ body: [UInt8], version: ID3Version,
                                             flags: UInt8) -> Result<Int, ID3ParseError> {
        guard version != .v2_2, flags & HeaderFlag.extendedHeader != 0 else { return .success(0) }
        var reader = ByteReader(body)
        // v2.3's size excludes its own 4 bytes and is a plain integer; v2.4's includes them and is sync-safe.
        let length = version == .v2_3 ? reader.readUInt(4).map { $0 + 4 } : reader.readSyncSafe(4)
        guard let length, length >= 6, length <= UInt64(body.count) else {
            return .failure(ID3ParseError(reason: "extended header size does not fit the tag", offset: 0))
        }
        return .success(Int(length))
    }

    private static func decodeFrames(_ body: [UInt8], from start: Int, version: ID3Version, flags: UInt8,
                                     tolerant: Bool) -> Result<([ID3Frame], [String]), ID3ParseError> {
        let standard = FrameLayout.standard(for: version)
        var notes: [String] = []
        var chain = FrameChain.walk(body, from: start, layout: standard)
        if tolerant, case .failure = chain {
            if version == .v2_4, case .success(let frames) = FrameChain.walk(body, from: start, layout: FrameLayout(version: .v2_4, syncSafeSizes: false)) {
                chain = .success(frames)
                notes.append("ID3v2.4 tag written with plain (not sync-safe) frame sizes")
            } else if case .success(let frames) = FrameChain.walk(body, from: start, layout: standard, strictPadding: false) {
                chain = .success(frames)
                notes.append("non-zero bytes in the padding ignored")
            }
        }
        guard case .success(let rawFrames) = chain else { return chain.map { _ in ([], []) } }
        let unsynchronised = version == .v2_4 && flags & HeaderFlag.unsynchronisation != 0
        let frames = rawFrames.map {
            FrameDecoder.decode($0, in: body, version: version, tagUnsynchronised: unsynchronised)
        }
        for frame in frames {
            if case .skipped(let reason) = frame.content { notes.append("frame \(frame.id) \(reason), not decoded") }
        }
        return .success((frames, notes))
    }
}

extension ID3ParseError {
    func shifted(by delta: Int) -> ID3ParseError { ID3ParseError(reason: reason, offset: offset + delta) }
}
