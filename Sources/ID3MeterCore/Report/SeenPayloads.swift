/// The Nielsen payloads seen so far in a source, to tell a repeated one: an open-addressing
/// table over each payload's hash, taken once as it arrives. (A `Set<String>` hashes a 249-byte
/// payload again whenever it grows, and a `Set` of payloads with their hashes still ran a second
/// hasher over each; a scan adds one payload a tag.) The hash is the standard library's, seeded
/// per process, so a stream cannot choose payloads that collide.
struct SeenPayloads {
    /// Indexes into `payloads` (-1: empty), at the payload's hash modulo the table's size.
    private var slots = [Int](repeating: -1, count: 64)
    private var hashes: [Int] = []
    private var payloads: [String] = []

    /// Adds `payload`; `false` when it was already there.
    mutating func insert(_ payload: String) -> Bool {
        let hash = payload.hashValue
        var slot = hash & (slots.count - 1)
        while slots[slot] >= 0 {
            let index = slots[slot]
            if hashes[index] == hash && payloads[index] == payload { return false }
            slot = (slot + 1) & (slots.count - 1)
        }
        slots[slot] = payloads.count
        hashes.append(hash)
        payloads.append(payload)
        // At most half full, so that a probe ends soon.
        if payloads.count * 2 > slots.count { grow() }
        return true
    }

    private mutating func grow() {
        slots = [Int](repeating: -1, count: slots.count * 2)
        for (index, hash) in hashes.enumerated() {
            var slot = hash & (slots.count - 1)
            while slots[slot] >= 0 { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = index
        }
    }
}
