/// Decodes one ID3v2 tag (ID3v2.2, v2.3 and v2.4 structure documents) from the bytes at
/// an offset. Every failure is a value with a reason; no input traps or reads out of bounds.
///
/// A strict parse accepts only the reading the spec prescribes. A tolerant one reads as players
/// and tag libraries do (Media3's Id3Decoder, mutagen, TagLib): it tries the readings real
/// writers produce (v2.4 with plain frame sizes, v2.3 with sync-safe ones, v2.4 unsynchronised
/// as a whole the v2.3 way, the extended-header flag without an extended header) and takes the
/// first whose frame chain adds up; when none does, the one that reads the most whole frames, so
/// that a tag cut short or followed by garbage still gives every frame whose bytes are there.
/// Each way the tag was read around is a note on it.
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
            return .failure(ID3ParseError(.noHeader, offset: offset))
        }
        guard let major = header.readByte(), let version = ID3Tag.Version(rawValue: major),
              let revision = header.readByte(), revision != 0xFF else {
            return .failure(ID3ParseError(.unsupportedVersion(bytes[min(offset + 3, bytes.count - 1)]), offset: offset + 3))
        }
        guard let flags = header.readByte(), let size = header.readSyncSafe(4) else {
            return .failure(ID3ParseError(.headerTruncatedOrSizeNotSyncSafe, offset: offset + 5))
        }
        if version == .v2_2, flags & HeaderFlag.extendedHeader != 0 {
            return .failure(ID3ParseError(.compressedVersion2_2, offset: offset))
        }
        let footerLength = version == .v2_4 && flags & HeaderFlag.footer != 0 ? 10 : 0
        let declared = headerLength + Int(size) + footerLength
        let bodyStart = offset + headerLength
        var byteCount = declared
        var notes: [String] = []
        var cut: ID3ParseError?
        if declared > bytes.count - offset {
            // Cut short (a recording or packet that ends early): the frames that are whole still count.
            cut = ID3ParseError(.truncated(declared: declared, present: bytes.count - offset), offset: offset)
            guard tolerant else { return .failure(cut!) }
            byteCount = bytes.count - offset
        }
        var body = Array(bytes[bodyStart..<min(bodyStart + Int(size), bytes.count)])
        if version != .v2_4, flags & HeaderFlag.unsynchronisation != 0 {
            body = removeUnsynchronisation(body)
        }
        // The first reading whose chain adds up; failing that, the one with the most whole frames.
        // The spec's reading is tried alone first: it is the one nearly every tag has, and the
        // others are not worth making until it fails.
        var best: (reading: TagReading, chain: FrameChainReading)?
        if let spec = TagReading.spec(body, version: version, flags: flags) {
            let chain = FrameChain.walk(spec.body, from: spec.start, layout: spec.layout)
            if chain.problem == nil { best = (spec, chain) }
        }
        var firstProblem: ID3ParseError?
        for reading in best == nil ? TagReading.candidates(body, version: version, flags: flags, tolerant: tolerant) : [] {
            let chain = FrameChain.walk(reading.body, from: reading.start, layout: reading.layout)
            if chain.problem == nil {
                best = (reading, chain)
                break
            }
            firstProblem = firstProblem ?? chain.problem
            if chain.frames.count > best?.chain.frames.count ?? 0 { best = (reading, chain) }
        }
        guard let (reading, chain) = best else {
            let first = firstProblem ?? ID3ParseError(.extendedHeaderDoesNotFit, offset: 0)
            return .failure(cut ?? first.shifted(by: bodyStart))
        }
        notes += reading.notes
        if let cut {
            notes.append("\(cut.reason): the \(chain.frames.count) whole frame\(chain.frames.count == 1 ? "" : "s") read")
        } else if let problem = chain.problem {
            notes.append("\(problem.reason) at byte \(problem.offset + headerLength) of the tag: the \(reading.body.count - problem.offset) "
                         + "bytes from there ignored, the \(chain.frames.count) frame\(chain.frames.count == 1 ? "" : "s") before read")
        }
        let frames = chain.frames.map {
            FrameDecoder.decode($0, in: reading.body, version: version, tagUnsynchronised: reading.unsynchronisedFrames)
        }
        return .success(ID3Tag(version: version, flags: flags, frames: frames, byteCount: byteCount, notes: notes))
    }

    /// The extended header's length from the start of the body, when the header flag says there is one.
    static func extendedHeaderLength(_ body: [UInt8], version: ID3Tag.Version, flags: UInt8) -> Result<Int, ID3ParseError> {
        guard version != .v2_2, flags & HeaderFlag.extendedHeader != 0 else { return .success(0) }
        var reader = ByteReader(body)
        // v2.3's size excludes its own 4 bytes and is a plain integer; v2.4's includes them and is sync-safe.
        let length = version == .v2_3 ? reader.readUInt(4).map { $0 + 4 } : reader.readSyncSafe(4)
        guard let length, length >= 6, length <= UInt64(body.count) else {
            return .failure(ID3ParseError(.extendedHeaderDoesNotFit, offset: 0))
        }
        return .success(Int(length))
    }

    static let unsynchronisationFlag = HeaderFlag.unsynchronisation
    static let extendedHeaderFlag = HeaderFlag.extendedHeader
}

extension ID3ParseError {
    func shifted(by delta: Int) -> ID3ParseError { ID3ParseError(reason, offset: offset + delta) }
}
