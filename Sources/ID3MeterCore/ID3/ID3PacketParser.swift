/// What one timed-ID3 packet holds: the tags decoded from it, in order, and the reason
/// decoding stopped early, if it did.
package struct ID3PacketContents: Sendable {
    public var tags: [ID3Tag]
    public var error: ID3ParseError?
}

/// Decodes a timed-ID3 packet: one or more whole ID3v2 tags back to back (Apple's timed
/// metadata spec), possibly with the header cut by FFmpeg 5.1, possibly followed by padding.
package enum ID3PacketParser {
    /// The ID3 tags of one timed-ID3 packet (one or more, back to back, each read leniently) and
    /// the error that stopped the reading, if any; the tags before it are kept.
    public static func parse(_ packet: [UInt8]) -> ID3PacketContents {
        var bytes = packet
        var tags: [ID3Tag] = []
        var offset = 0
        if !ID3TagParser.hasHeader(packet, at: 0) {
            guard CutHeaderRepair.looksCut(packet), let (restored, tag) = CutHeaderRepair.restore(packet) else {
                return ID3PacketContents(tags: [], error: ID3ParseError(.packetDoesNotStartWithTag, offset: 0))
            }
            bytes = restored
            tags.append(tag)
            offset = tag.byteCount
        }
        while offset < bytes.count {
            if bytes[offset...].allSatisfy({ $0 == 0 }) { break }
            switch ID3TagParser.parse(bytes, at: offset) {
            case .success(let tag):
                tags.append(tag)
                offset += tag.byteCount
            case .failure(let error):
                let shift = bytes.count - packet.count
                return ID3PacketContents(tags: tags, error: error.shifted(by: -shift))
            }
        }
        return ID3PacketContents(tags: tags, error: nil)
    }
}
