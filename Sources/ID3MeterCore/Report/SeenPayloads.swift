/// The Nielsen payloads seen so far on a tag stream, to tell a repeated one: an open-addressing
/// table of fingerprints, two 64-bit hashes of each payload's bytes taken as it arrives.
///
/// Payloads are not kept: at a tag a second they were most of a long scan's memory (about 280
/// bytes each against 16). Two payloads are taken as one when both hashes agree, which for
/// different payloads happens with odds of about n^2 / 2^128 over n tags (1e-26 for a million).
/// The first hash is the standard library's, seeded per process, so a stream cannot choose
/// payloads that collide; the second, a multiply-and-shift over 8-byte words, only makes
/// chance collisions of the first one rarer, and costs a fifth as much.
struct SeenPayloads {
    /// `check` is the second hash with its low bit set, so that 0 marks an empty slot.
    private struct Slot {
        var hash: UInt64 = 0
        var check: UInt64 = 0
    }

    /// At the payload's hash modulo the table's size, or after it.
    private var slots = [Slot](repeating: Slot(), count: 64)
    private var count = 0

    /// Adds `payload`; `false` when it was already there.
    mutating func insert(_ payload: String) -> Bool {
        var payload = payload
        let (hash, check) = payload.withUTF8 { Self.fingerprint(UnsafeRawBufferPointer($0)) }
        let mask = slots.count - 1
        var position = Int(truncatingIfNeeded: hash) & mask
        while slots[position].check != 0 {
            if slots[position].hash == hash && slots[position].check == check { return false }
            position = (position + 1) & mask
        }
        slots[position] = Slot(hash: hash, check: check)
        count += 1
        // At most half full, so that a probe ends soon.
        if count * 2 > slots.count { grow() }
        return true
    }

    private static func fingerprint(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        var check = UInt64(truncatingIfNeeded: bytes.count) &* 0x9E37_79B9_7F4A_7C15
        var index = 0
        func mix(_ word: UInt64) {
            check = (check ^ word) &* 0xFF51_AFD7_ED55_8CCD
            check ^= check >> 29
        }
        while bytes.count - index >= 8 {
            mix(bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            index += 8
        }
        var last: UInt64 = 0
        for byte in bytes[index...] { last = last << 8 | UInt64(byte) }
        mix(last)
        return (UInt64(bitPattern: Int64(hasher.finalize())), check | 1)
    }

    private mutating func grow() {
        let old = slots
        slots = [Slot](repeating: Slot(), count: old.count * 2)
        let mask = slots.count - 1
        for slot in old where slot.check != 0 {
            var position = Int(truncatingIfNeeded: slot.hash) & mask
            while slots[position].check != 0 { position = (position + 1) & mask }
            slots[position] = slot
        }
    }
}
