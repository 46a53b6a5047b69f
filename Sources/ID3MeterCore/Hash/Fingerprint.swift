/// A string told by two 64-bit hashes of its UTF-8 bytes instead of kept: 16 bytes against the
/// string's block (about 300 for a 249-byte Nielsen payload, 100 for a segment's URL). What is
/// remembered for a long time per channel (the payloads delivered, the segments read) is kept so;
/// kept whole, it was most of a channel's memory after an hour (docs/PERFORMANCE.md).
///
/// Two strings are taken as one when both hashes agree, which for different strings happens
/// with odds of about n^2 / 2^128 over n strings (1e-26 for a million). The first hash is the
/// standard library's, seeded per process, so a stream cannot choose strings that collide; the
/// second, a multiply-and-shift over 8-byte words, only makes chance collisions of the first one
/// rarer, and costs a fifth as much.
package struct Fingerprint: Hashable, Sendable {
    let hash: UInt64
    /// The second hash with its low bit set: never 0, so that 0 can mark an empty slot of a table.
    let check: UInt64

    /// The string's alone.
    package init(_ text: String) { self.init(text, at: .none) }

    /// A tag payload's at `pts` (`nil`: carried without one): the same payload at two PTS is two
    /// fingerprints, and neither is the payload's alone.
    package init(_ payload: String, pts: Int64?) { self.init(payload, at: .some(pts)) }

    private init(_ text: String, at pts: Int64??) {
        var text = text
        self = text.withUTF8 { Self(bytes: UnsafeRawBufferPointer($0), pts: pts) }
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
    package func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}
