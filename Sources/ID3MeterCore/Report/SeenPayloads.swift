/// The Nielsen payloads seen so far in a source, to tell a repeated one: an open-addressing
/// table over each payload's hash, taken once as it arrives. (A `Set<String>` hashes a 249-byte
/// payload again whenever it grows, and a `Set` of payloads with their hashes still ran a second
/// hasher over each; a scan adds one payload a tag.) The hash is the standard library's, seeded
/// per process, so a stream cannot choose payloads that collide.
struct SeenPayloads {
    /// A payload's hash and where it is in `payloads`, kept together so that a probe reads one
    /// place in memory; `index` -1 is an empty slot.
    private struct Slot {
        var hash = 0
        var index = -1
    }

    /// At the payload's hash modulo the table's size, or after it.
    private var slots = [Slot](repeating: Slot(), count: 64)
    private var payloads: [String] = []

    /// Adds `payload`; `false` when it was already there.
    mutating func insert(_ payload: String) -> Bool {
        let hash = payload.hashValue
        var position = hash & (slots.count - 1)
        while slots[position].index >= 0 {
            if slots[position].hash == hash && payloads[slots[position].index] == payload { return false }
            position = (position + 1) & (slots.count - 1)
        }
        slots[position] = Slot(hash: hash, index: payloads.count)
        payloads.append(payload)
        // At most half full, so that a probe ends soon.
        if payloads.count * 2 > slots.count { grow() }
        return true
    }

    private mutating func grow() {
        let old = slots
        slots = [Slot](repeating: Slot(), count: old.count * 2)
        for slot in old where slot.index >= 0 {
            var position = slot.hash & (slots.count - 1)
            while slots[position].index >= 0 { position = (position + 1) & (slots.count - 1) }
            slots[position] = slot
        }
    }
}
