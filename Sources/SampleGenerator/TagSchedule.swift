import ID3Meter

/// One timed-ID3 packet to mux: its PTS and the tags in it, back to back.
public struct ScheduledPacket: Sendable {
    public var pts: Int64
    public var tags: [ID3TagSpec]

    public var bytes: [UInt8] { tags.flatMap { $0.bytes() } }
}

/// A line of a sample's ground truth: one frame the generator wrote, in stream order.
/// Tests compare the extractor against these lines, never against its own output.
public struct ExpectedFrame: Codable, Sendable, Equatable {
    public var pts: Int64
    public var id: String
    public var owner: String?
    public var description: String?
    public var version: UInt8
    public var nielsen: Bool
    /// For HLS samples: the segment file that carries the frame.
    public var segment: String?
}

/// The tag timeline of a sample: Nielsen tags about every 10 s with jitter (a placeholder
/// PC CID for the first, as in the 10-20 s after a source change), decoys between them, and
/// special cases at fixed places.
public struct TagSchedule {
    public enum Flavour: String, CaseIterable, Sendable {
        /// v2.4 Nielsen tags, decoys, back-to-back tags, one tag over many TS packets.
        case standard
        /// Everything as ID3v2.3.
        case v23
        /// Unsynchronised tags (v2.3 tag-level and v2.4 per-frame) with 0xFF bytes that need it.
        case unsync
    }

    public var packets: [ScheduledPacket] = []

    public init(packets: [ScheduledPacket]) { self.packets = packets }

    public init(flavour: Flavour, startPTS: Int64, duration: Double, seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var factory = NielsenTagFactory(seed: seed)
        let version: ID3Tag.Version = flavour == .v23 ? .v2_3 : .v2_4
        var seconds = 2.0
        var index = 0
        while seconds < duration - 1 {
            let pts = startPTS + Int64(seconds * 90_000)
            let owner = factory.owner(secondsIntoDay: 36_000 + Int(seconds), placeholder: index == 0)
            var nielsen = ID3TagSpec(version: version, frames: [.priv(owner: owner, data: [0x41])], extraFlags: 0x20)
            if flavour == .unsync {
                nielsen.unsynchronised = true
                nielsen.version = index % 2 == 0 ? .v2_3 : .v2_4
                nielsen.frames.append(.priv(owner: "com.example.binary", data: [0xFF, 0xFB, 0x90, 0xFF, 0x00, 0xFF]))
            }
            packets.append(ScheduledPacket(pts: pts, tags: [nielsen]))
            packets.append(ScheduledPacket(pts: pts + 45_000, tags: decoys(version: version, index: index, pts: pts + 45_000)))
            index += 1
            seconds += Double.random(in: 8.5...11.5, using: &random)
        }
    }

    private func decoys(version: ID3Tag.Version, index: Int, pts: Int64) -> [ID3TagSpec] {
        switch index % 3 {
        case 0:
            return [ID3TagSpec(version: version, frames: [.txxx(description: "scte35", value: "cue-\(index)")])]
        case 1:
            // Two tags back to back in one packet, the first with a timestamp like packed audio has.
            return [ID3TagSpec(version: version, frames: [.transportStreamTimestamp(pts)]),
                    ID3TagSpec(version: version, frames: [.priv(owner: "com.example.other", data: [1, 2, 3])], padding: 16)]
        default:
            // A tag far larger than one TS packet.
            return [ID3TagSpec(version: version, frames: [.priv(owner: "www.example.com/large", data: [UInt8](repeating: 0x5A, count: 3_000))])]
        }
    }

    /// The ground truth for these packets, one line per frame.
    public func expectedFrames(segment: (Int64) -> String? = { _ in nil }) -> [ExpectedFrame] {
        packets.flatMap { packet in
            packet.tags.flatMap { tag in
                tag.frames.map { frame in
                    let owner = frame.id == "PRIV" ? String(decoding: frame.data.prefix { $0 != 0 }, as: UTF8.self) : nil
                    let description = frame.id == "TXXX" ? String(decoding: frame.data.dropFirst().prefix { $0 != 0 }, as: UTF8.self) : nil
                    return ExpectedFrame(pts: packet.pts, id: frame.id, owner: owner, description: description,
                                         version: tag.version.rawValue,
                                         nielsen: owner?.hasPrefix(NielsenTag.ownerPrefix) ?? false,
                                         segment: segment(packet.pts))
                }
            }
        }
    }
}
