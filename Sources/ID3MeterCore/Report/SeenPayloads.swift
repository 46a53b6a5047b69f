/// The Nielsen payloads seen so far on a tag stream, to tell a repeated one: an open-addressing
/// table of their fingerprints (`Fingerprint`). Payloads are not kept: at a tag a second
/// they were most of a long scan's memory.
struct SeenPayloads {
    /// A fingerprint's two hashes; `check` 0 marks an empty slot (a fingerprint's never is).
    private struct Slot {
        var hash: UInt64 = 0
        var check: UInt64 = 0
    }

    /// At the payload's hash modulo the table's size, or after it.
    private var slots = [Slot](repeating: Slot(), count: 64)
    private var count = 0

    /// Adds `payload`; `false` when it was already there.
    mutating func insert(_ payload: String) -> Bool {
        let fingerprint = Fingerprint(payload)
        let (hash, check) = (fingerprint.hash, fingerprint.check)
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
