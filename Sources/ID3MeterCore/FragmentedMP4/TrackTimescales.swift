/// The timescale of each track, from an initialisation segment's `moov` (`EXT-X-MAP`): the
/// clock that a fragment's `tfdt` counts in.
struct TrackTimescales: Equatable {
    var byTrackID: [Int: Int]

    init(byTrackID: [Int: Int]) { self.byTrackID = byTrackID }

    /// `nil` when the bytes hold no `moov` with a track.
    init?(initSegment bytes: [UInt8]) {
        guard let moov = Box.children(of: bytes).first(where: { $0.type == "moov" }) else { return nil }
        var timescales: [Int: Int] = [:]
        for trak in moov.children(in: bytes) where trak.type == "trak" {
            guard let id = trak.child("tkhd", in: bytes).flatMap({ Self.fieldAfterTimes($0, in: bytes) }),
                  let mdhd = trak.child("mdia", in: bytes)?.child("mdhd", in: bytes),
                  let timescale = Self.fieldAfterTimes(mdhd, in: bytes), timescale > 0 else { continue }
            timescales[id] = timescale
        }
        guard !timescales.isEmpty else { return nil }
        byTrackID = timescales
    }

    /// tkhd and mdhd: the track ID, or the timescale, follows the creation and modification
    /// times (64-bit in version 1).
    private static func fieldAfterTimes(_ box: Box, in bytes: [UInt8]) -> Int? {
        guard case (let version, var reader)? = box.fullBoxFields(in: bytes), reader.skip(version == 1 ? 16 : 8) else { return nil }
        return reader.readInt(4)
    }
}
