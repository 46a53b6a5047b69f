/// The last `capacity` distinct fingerprints inserted: what a channel remembers for hours (the
/// tags it delivered, the segments it read) in memory that stops growing there, the oldest
/// forgotten first.
///
/// The fingerprints are kept once, in a ring in the order they came; a table of 32-bit slots
/// (linear probing, at most half full) finds them by their hash. A `Set` beside the ring kept
/// each one twice, the set in twice as many buckets: 192 KB at 4,096 where this takes 96 KB; a
/// channel holds two such memories (docs/PERFORMANCE.md).
package struct RecentFingerprints: Sendable {
    package let capacity: Int
    /// A ring once full: `oldest` is the next to be forgotten.
    private var order: [Fingerprint] = []
    private var oldest = 0
    /// Each fingerprint's place in `order`, plus one; 0 is an empty slot. Its count is a power of
    /// two, doubled as `order` grows, so a memory that holds a few holds a small table.
    private var slots: [UInt32] = Array(repeating: 0, count: 16)

    package init(capacity: Int) { self.capacity = min(max(capacity, 1), Int(UInt32.max - 1)) }

    package func contains(_ fingerprint: Fingerprint) -> Bool { slot(of: fingerprint).found }

    /// The table's size (a test's view of its bound).
    package var slotCount: Int { slots.count }

    /// Adds `fingerprint`, forgetting the oldest past `capacity`; `false` when it was there already.
    @discardableResult
    package mutating func insert(_ fingerprint: Fingerprint) -> Bool {
        guard !slot(of: fingerprint).found else { return false }
        let place: Int
        if order.count < capacity {
            order.append(fingerprint)
            place = order.count - 1
            if order.count * 2 > slots.count { grow() }
        } else {
            forget(at: slot(of: order[oldest]).index)
            order[oldest] = fingerprint
            place = oldest
            oldest = (oldest + 1) % capacity
        }
        slots[slot(of: fingerprint).index] = UInt32(place + 1)
        return true
    }

    /// Where `fingerprint` is in `slots`, or the empty slot where it would go.
    private func slot(of fingerprint: Fingerprint) -> (index: Int, found: Bool) {
        let mask = slots.count - 1
        var index = home(fingerprint, mask: mask)
        while slots[index] != 0 {
            if order[Int(slots[index]) - 1] == fingerprint { return (index, true) }
            index = (index + 1) & mask
        }
        return (index, false)
    }

    private func home(_ fingerprint: Fingerprint, mask: Int) -> Int { Int(truncatingIfNeeded: fingerprint.hash) & mask }

    /// Empties the slot at `index`, moving back each slot after it that may not be passed over
    /// (linear probing's deletion, with no tombstones to pile up in a ring that turns for hours).
    private mutating func forget(at index: Int) {
        let mask = slots.count - 1
        var hole = index
        var next = (hole + 1) & mask
        slots[hole] = 0
        while slots[next] != 0 {
            let wanted = home(order[Int(slots[next]) - 1], mask: mask)
            // Moved back when its home is not in (hole, next], the stretch it may sit after.
            let between = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
            if !between {
                slots[hole] = slots[next]
                slots[next] = 0
                hole = next
            }
            next = (next + 1) & mask
        }
    }

    /// Twice the slots, each fingerprint placed again.
    private mutating func grow() {
        slots = Array(repeating: 0, count: slots.count * 2)
        for (place, fingerprint) in order.enumerated() { slots[slot(of: fingerprint).index] = UInt32(place + 1) }
    }
}
