/// The last `capacity` distinct fingerprints inserted: what a channel remembers for hours (the
/// tags it delivered, the segments it read) in memory that stops growing there, the oldest
/// forgotten first.
package struct RecentFingerprints: Sendable {
    package let capacity: Int
    private var set: Set<Fingerprint> = []
    /// A ring once full: `oldest` is the next to be forgotten.
    private var order: [Fingerprint] = []
    private var oldest = 0

    package init(capacity: Int) { self.capacity = max(capacity, 1) }

    package func contains(_ fingerprint: Fingerprint) -> Bool { set.contains(fingerprint) }

    /// Adds `fingerprint`, forgetting the oldest past `capacity`; `false` when it was there already.
    @discardableResult
    package mutating func insert(_ fingerprint: Fingerprint) -> Bool {
        guard set.insert(fingerprint).inserted else { return false }
        if order.count < capacity {
            order.append(fingerprint)
        } else {
            set.remove(order[oldest])
            order[oldest] = fingerprint
            oldest = (oldest + 1) % capacity
        }
        return true
    }
}
