/// Remembers what was delivered so that no tag goes out twice: by PTS and payload across
/// playlist reloads and reconnects, and, as integrations do, a tag identical to the previous one.
/// Keeps the last `capacity` keys, so memory stays flat over weeks.
struct DuplicateFilter {
    private struct Key: Hashable {
        var pts: Int64?
        var payload: String
    }

    private let capacity: Int
    private var keys: Set<Key> = []
    private var order: [Key] = []
    private var oldest = 0
    private var previousPayload: String?

    init(capacity: Int = 4_096) { self.capacity = capacity }

    /// Records the tag and tells whether it is new.
    mutating func admit(payload: String, pts: Int64?) -> Bool {
        let key = Key(pts: pts, payload: payload)
        guard payload != previousPayload, !keys.contains(key) else { return false }
        previousPayload = payload
        keys.insert(key)
        if order.count < capacity {
            order.append(key)
        } else {
            keys.remove(order[oldest])
            order[oldest] = key
            oldest = (oldest + 1) % capacity
        }
        return true
    }
}
