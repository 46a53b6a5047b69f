import ID3Meter

/// One frame to write: its identifier and its data before any unsynchronisation.
public struct ID3FrameSpec: Sendable {
    public var id: String
    public var data: [UInt8]

    public init(id: String, data: [UInt8]) {
        self.id = id
        self.data = data
    }

    public static func priv(owner: String, data: [UInt8]) -> ID3FrameSpec {
        ID3FrameSpec(id: "PRIV", data: Array(owner.utf8) + [0] + data)
    }

    /// Latin-1 description and value.
    public static func txxx(description: String, value: String) -> ID3FrameSpec {
        ID3FrameSpec(id: "TXXX", data: [0] + Array(description.utf8) + [0] + Array(value.utf8))
    }

    /// Apple's HLS timed-metadata timestamp: the 33-bit PTS in 8 big-endian bytes.
    public static func transportStreamTimestamp(_ pts: Int64) -> ID3FrameSpec {
        priv(owner: "com.apple.streaming.transportStreamTimestamp",
             data: (0..<8).reversed().map { UInt8(truncatingIfNeeded: pts >> ($0 * 8)) })
    }
}

/// Writes ID3v2.3 and v2.4 tags with the options real encoders use, for samples and tests.
public struct ID3TagSpec: Sendable {
    public var version: ID3Tag.Version = .v2_4
    public var frames: [ID3FrameSpec]
    /// Header flag bits besides unsynchronisation and footer (Nielsen's encoders set 0x20).
    public var extraFlags: UInt8 = 0
    public var unsynchronised = false
    public var extendedHeader = false
    public var footer = false
    public var padding = 0

    public init(version: ID3Tag.Version = .v2_4, frames: [ID3FrameSpec], extraFlags: UInt8 = 0,
                unsynchronised: Bool = false, extendedHeader: Bool = false, footer: Bool = false, padding: Int = 0) {
        self.version = version
        self.frames = frames
        self.extraFlags = extraFlags
        self.unsynchronised = unsynchronised
        self.extendedHeader = extendedHeader
        self.footer = footer
        self.padding = padding
    }

    public func bytes() -> [UInt8] {
        var body: [UInt8] = []
        if extendedHeader {
            // v2.3: size excluding itself, 2 flag bytes, padding size; v2.4: sync-safe size including itself, 1 flag byte count, flags.
            body += version == .v2_3 ? [0, 0, 0, 6, 0, 0, 0, 0, 0, 0] : [0, 0, 0, 6, 1, 0]
        }
        for frame in frames { body += frameBytes(frame) }
        body += [UInt8](repeating: 0, count: padding)
        if unsynchronised, version == .v2_3 { body = Self.unsynchronise(body) }
        var flags = extraFlags
        if unsynchronised { flags |= 0x80 }
        if extendedHeader { flags |= 0x40 }
        if footer { flags |= 0x10 }
        let size = Self.syncSafe(body.count)
        var tag: [UInt8] = [0x49, 0x44, 0x33, version.rawValue, 0, flags] + size + body
        if footer { tag += [0x33, 0x44, 0x49, version.rawValue, 0, flags] + size }
        return tag
    }

    private func frameBytes(_ frame: ID3FrameSpec) -> [UInt8] {
        var data = frame.data
        var formatFlags: UInt8 = 0
        if unsynchronised, version == .v2_4 {
            // ID3v2.4 §4.1.2: per-frame unsynchronisation, with the original length up front.
            data = Self.syncSafe(frame.data.count) + Self.unsynchronise(frame.data)
            formatFlags = 0x03
        }
        let size = version == .v2_4 ? Self.syncSafe(data.count) : Self.plain(data.count)
        return Array(frame.id.utf8) + size + [0, formatFlags] + data
    }

    public static func syncSafe(_ value: Int) -> [UInt8] {
        [21, 14, 7, 0].map { UInt8((value >> $0) & 0x7F) }
    }

    public static func plain(_ value: Int) -> [UInt8] {
        [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
    }

    /// Inserts a zero after every 0xFF that a decoder could take for MPEG sync or for an escape.
    public static func unsynchronise(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        for (index, byte) in bytes.enumerated() {
            result.append(byte)
            guard byte == 0xFF else { continue }
            let next = index + 1 < bytes.count ? bytes[index + 1] : 0
            if next & 0xE0 == 0xE0 || next == 0 { result.append(0) }
        }
        return result
    }
}
