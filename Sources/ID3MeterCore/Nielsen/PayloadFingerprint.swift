/// A Nielsen payload (with the PTS it was carried at, when that matters) told by two 64-bit
/// hashes of its bytes instead of kept: 16 bytes against about 290 (a 249-byte payload's string).
/// Remembering every payload seen or delivered is what a long scan, or a channel metered for
/// weeks, would otherwise fill its memory with.
///
/// Two payloads are taken as one when both hashes agree, which for different payloads happens
/// with odds of about n^2 / 2^128 over n payloads (1e-26 for a million). The first hash is the
/// standard library's, seeded per process, so a stream cannot choose payloads that collide; the
/// second, a multiply-and-shift over 8-byte words, only makes chance collisions of the first one
/// rarer, and costs a fifth as much.
struct PayloadFingerprint: Hashable {
    let hash: UInt64
    /// The second hash with its low bit set: never 0, so that 0 can mark an empty slot of a table.
    let check: UInt64

    /// The payload's alone.
    init(_ payload: String) { self.init(payload, at: .none) }

    /// The payload's at `pts` (`nil`: carried without one): the same payload at two PTS is two
    /// fingerprints, and neither is the payload's alone.
    init(_ payload: String, pts: Int64?) { self.init(payload, at: .some(pts)) }

    private init(_ payload: String, at pts: Int64??) {
        var payload = payload
        self = payload.withUTF8 { Self(bytes: UnsafeRawBufferPointer($0), pts: pts) }
    }

    private init(bytes: UnsafeRawBufferPointer, pts: Int64??) {
        var hasher = Hasher()
        var check = UInt64(truncatingIfNeeded: bytes.count) &* 0x9E37_79B9_7F4A_7C15
        func mix(_ word: UInt64) {
            check = (check ^ word) &* 0xFF51_AFD7_ED55_8CCD
            check ^= check >> 29
        }
        if case .some(let pts) = pts {
            hasher.combine(pts)
            mix(pts == nil ? 1 : 2)
            mix(UInt64(bitPattern: pts ?? 0))
        }
        hasher.combine(bytes: bytes)
        var index = 0
        while bytes.count - index >= 8 {
            mix(bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            index += 8
        }
        var last: UInt64 = 0
        for byte in bytes[index...] { last = last << 8 | UInt64(byte) }
        mix(last)
        hash = UInt64(bitPattern: Int64(hasher.finalize()))
        self.check = check | 1
    }

    // Already a hash: Hashable's own would hash it again.
    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}
