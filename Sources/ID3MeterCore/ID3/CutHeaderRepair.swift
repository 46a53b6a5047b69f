/// FFmpeg 5.1's MPEG-TS demuxer strips 5 bytes from every stream_type 0x15 PES payload
/// (a KLV access-unit header that ID3 payloads do not have), so a timed-ID3 packet can
/// arrive starting at the ID3 flags byte, without "ID3" and the version. The rest of
/// the header survives, so the cut is recognisable from the bytes alone.
enum CutHeaderRepair {
    static let cutLength = 5

    /// Whether `packet` starts like an ID3 header minus its first 5 bytes: a flags byte
    /// (only the top four bits are defined) and a sync-safe size that fits the packet.
    static func looksCut(_ packet: [UInt8]) -> Bool {
        var reader = ByteReader(packet)
        guard let flags = reader.readByte(), flags & 0x0F == 0, let size = reader.readSyncSafe(4) else {
            return false
        }
        return size + UInt64(cutLength) <= UInt64(packet.count)
    }

    /// Parses a cut packet's first tag under each version's header; the frame chain
    /// decides which one holds (v2.4 sync-safe sizes vs v2.3 plain ones). Every strict
    /// reading goes before any tolerant one, or v2.3 would pass for v2.4 with plain sizes.
    static func restore(_ packet: [UInt8]) -> (bytes: [UInt8], tag: ID3Tag)? {
        for tolerant in [false, true] {
            for version in [ID3Tag.Version.v2_4, .v2_3, .v2_2] {
                let restored: [UInt8] = [0x49, 0x44, 0x33, version.rawValue, 0] + packet
                if case .success(var tag) = ID3TagParser.parse(restored, at: 0, tolerant: tolerant) {
                    tag.notes.insert("header restored: FFmpeg 5.1 dropped its first 5 bytes; " + versionNote(tag, packet), at: 0)
                    return (restored, tag)
                }
            }
        }
        return nil
    }

    /// With every frame under 128 bytes, sync-safe and plain sizes are the same bytes, and the
    /// tag reads alike as v2.3 and v2.4: say so rather than claim a version.
    private static func versionNote(_ tag: ID3Tag, _ packet: [UInt8]) -> String {
        if tag.version == .v2_4, case .success = ID3TagParser.parse([0x49, 0x44, 0x33, 3, 0] + packet, at: 0, tolerant: false) {
            return "version 2.3 or 2.4 (the frames read alike), taken as 2.4"
        }
        return "version \(tag.version) from the frame chain"
    }
}
