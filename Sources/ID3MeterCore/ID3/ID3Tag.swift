/// The ID3v2 major versions in the wild; each frames its data differently.
public enum ID3Version: UInt8, Sendable, Codable, CustomStringConvertible {
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

/// One decoded ID3v2 tag.
public struct ID3Tag: Sendable, Equatable {
    public var version: ID3Version
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

/// Why a tag could not be decoded, and where in its packet.
public struct ID3ParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var offset: Int

    public var description: String { "\(reason) (at byte \(offset))" }
}
