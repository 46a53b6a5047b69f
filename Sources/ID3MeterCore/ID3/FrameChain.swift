/// How one reading of a tag frames its frames. The same bytes can be read several ways
/// (v2.4 sync-safe sizes, v2.4 written with plain sizes, v2.3 after a cut header), and
/// the right reading is the one whose frames add up (Media3's Id3Decoder does the same).
struct FrameLayout: Equatable {
    var version: ID3Tag.Version
    var syncSafeSizes: Bool

    var idLength: Int { version == .v2_2 ? 3 : 4 }
    var sizeLength: Int { version == .v2_2 ? 3 : 4 }
    var flagsLength: Int { version == .v2_2 ? 0 : 2 }
    var headerLength: Int { idLength + sizeLength + flagsLength }

    /// The reading the spec prescribes for `version`.
    static func standard(for version: ID3Tag.Version) -> FrameLayout {
        FrameLayout(version: version, syncSafeSizes: version == .v2_4)
    }
}

/// A frame located in a tag body, not yet decoded.
struct RawFrame {
    var id: String
    var flags: UInt16
    var data: Range<Int>
}

/// The frames one reading finds, and where and why its chain stopped short, if it did.
struct FrameChainReading {
    var frames: [RawFrame]
    /// `nil` when the chain adds up: every frame whole, then only zero padding.
    var problem: ID3ParseError?
}

enum FrameChain {
    /// Walks the frames of `body` from `start` while they are whole and validly named. The
    /// chain adds up when what follows the last one is zero padding (or nothing).
    static func walk(_ body: [UInt8], from start: Int, layout: FrameLayout) -> FrameChainReading {
        var reader = ByteReader(body, from: start)
        var frames: [RawFrame] = []
        while reader.remaining >= layout.headerLength, reader.peek() != 0 {
            let frameOffset = reader.offset
            guard let idBytes = reader.read(layout.idLength), idBytes.allSatisfy(isFrameIDByte) else {
                return FrameChainReading(frames: frames, problem: ID3ParseError(
                    .invalidFrameID(version: layout.version), offset: frameOffset))
            }
            let size = layout.syncSafeSizes ? reader.readSyncSafe(layout.sizeLength) : reader.readUInt(layout.sizeLength)
            let flags = reader.readUInt(layout.flagsLength) ?? 0
            let id = String(decoding: idBytes, as: UTF8.self)
            guard let size, size <= UInt64(reader.remaining) else {
                return FrameChainReading(frames: frames, problem: ID3ParseError(.frameOverruns(id), offset: frameOffset))
            }
            let dataStart = reader.offset
            _ = reader.skip(Int(size))
            frames.append(RawFrame(id: id, flags: UInt16(flags), data: dataStart..<reader.offset))
        }
        let rest = reader.rest()
        if let garbage = rest.firstIndex(where: { $0 != 0 }) {
            let reason: ID3ParseError.Reason = garbage == rest.startIndex ? .bytesAfterLastFrame : .nonZeroPadding
            return FrameChainReading(frames: frames, problem: ID3ParseError(reason, offset: garbage))
        }
        return FrameChainReading(frames: frames, problem: nil)
    }

    private static func isFrameIDByte(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte)
    }
}
