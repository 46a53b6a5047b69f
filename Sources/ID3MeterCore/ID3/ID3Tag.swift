extension ID3Tag {
    /// The ID3v2 major versions in the wild; each frames its data differently.
    public enum Version: UInt8, Sendable, Codable, CustomStringConvertible {
        case v2_2 = 2, v2_3 = 3, v2_4 = 4

        /// Literals, not interpolated: a scan writes one a tag.
        public var description: String {
            switch self {
            case .v2_2: "2.2"
            case .v2_3: "2.3"
            case .v2_4: "2.4"
            }
        }
    }
}

/// One decoded ID3v2 tag.
public struct ID3Tag: Sendable, Equatable {
    public var version: ID3Tag.Version
    public var flags: UInt8
    public var frames: [ID3Frame]
    /// Bytes the tag occupied in its packet, header and footer included.
    public var byteCount: Int
    /// How the tag was read around what was wrong with it: a restored header, a cut end, a
    /// reading other than the spec's. (A frame that could not be decoded says so in its content.)
    public var notes: [String]

    public var privFrames: [(owner: String, data: [UInt8])] {
        frames.compactMap { if case .priv(let owner, let data) = $0.content { (owner, data) } else { nil } }
    }
}

/// One frame of a tag: its identifier, its size on the wire, and what it holds.
public struct ID3Frame: Sendable, Equatable {
    /// A frame's body, decoded where id3-meter reads it (PRIV, TXXX, text frames) and kept as
    /// bytes or a reason otherwise.
    public enum Content: Sendable, Equatable {
        /// PRIV: the owner identifier (ISO-8859-1) and the private bytes. Nielsen's tag is the owner.
        case priv(owner: String, data: [UInt8])
        /// TXXX (TXX in v2.2): a described user text.
        case userText(description: String, value: String)
        /// T??? text frames; v2.4 allows several NUL-separated values.
        case text([String])
        /// Compressed, encrypted or shorter than its flags require: kept as a fact, not decoded.
        case skipped(reason: String)
        case other
    }

    public var id: String
    public var size: Int
    public var content: Content

    public init(id: String, size: Int, content: Content) {
        self.id = id
        self.size = size
        self.content = content
    }
}

/// Why a tag, or the bytes that should hold one, could not be decoded, and where.
public struct ID3ParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: Reason
    /// Where in the packet, box or input.
    public var offset: Int
    /// Where in the tag, when `offset` places the tag in its input.
    public var offsetInTag: Int?

    public init(_ reason: Reason, offset: Int, offsetInTag: Int? = nil) {
        self.reason = reason
        self.offset = offset
        self.offsetInTag = offsetInTag
    }

    /// What is wrong, with the values that say more; `description` puts it in words.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        case noHeader
        /// The ID3v2 major version byte (2, 3 and 4 are read).
        case unsupportedVersion(UInt8)
        case headerTruncatedOrSizeNotSyncSafe
        /// ID3v2.2 with its compression flag: no scheme was ever defined.
        case compressedVersion2_2
        case truncated(declared: Int, present: Int)
        case extendedHeaderDoesNotFit
        case packetDoesNotStartWithTag
        case invalidFrameID(version: ID3Tag.Version)
        case frameOverruns(String)
        case bytesAfterLastFrame
        case nonZeroPadding
        /// An `emsg` box too short for its header (`version` nil) or its version's fields.
        case emsgTruncated(version: Int?)
        case emsgUnknownVersion(Int)
        /// A box past the size an fMP4 box is read with, skipped.
        case boxTooLarge(type: String, size: Int, maximum: Int)
        /// Packed audio: bytes that are neither audio frames nor ID3 tags, skipped.
        case strayBytes(Int)
        /// Packed audio: a tag past the size one is read with, skipped.
        case tagTooLarge(declared: Int, maximum: Int)

        public var description: String {
            switch self {
            case .noHeader: "no ID3 header"
            case .unsupportedVersion(let major): "unsupported ID3 version 2.\(major)"
            case .headerTruncatedOrSizeNotSyncSafe: "tag header truncated or its size is not sync-safe"
            case .compressedVersion2_2: "ID3v2.2 compressed tag (no scheme defined)"
            case .truncated(let declared, let present): "tag declares \(declared) bytes but only \(present) are present"
            case .extendedHeaderDoesNotFit: "extended header size does not fit the tag"
            case .packetDoesNotStartWithTag: "packet does not start with an ID3 tag"
            case .invalidFrameID(let version): "invalid frame identifier in ID3v\(version)"
            case .frameOverruns(let id): "frame \(id) overruns the tag"
            case .bytesAfterLastFrame: "bytes after the last frame that are neither a frame nor padding"
            case .nonZeroPadding: "non-zero bytes in the padding"
            case .emsgTruncated(let version): "emsg box: truncated " + (version.map { "version \($0) fields" } ?? "header")
            case .emsgUnknownVersion(let version): "emsg box: unknown version \(version)"
            case .boxTooLarge(let type, let size, let maximum): "\(type) box of \(size) bytes skipped (over \(maximum) bytes)"
            case .strayBytes(let count): "\(count) bytes that are neither audio frames nor ID3 tags skipped"
            case .tagTooLarge(let declared, let maximum):
                "tag declares \(declared) bytes, more than the \(maximum) a packed audio tag is read with; skipped"
            }
        }
    }

    public var description: String {
        "\(reason)" + (offsetInTag.map { " (byte \($0) of the tag)" } ?? "") + " (at byte \(offset))"
    }
}
