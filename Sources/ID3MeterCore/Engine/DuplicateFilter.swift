/// Remembers what was delivered so that no tag goes out twice: by PTS and payload across
/// playlist reloads and reconnects, and, as integrations do, a tag identical to the previous one.
/// Keeps the last `capacity` keys, so memory stays flat over weeks.
///
/// A key is the fingerprint of the payload at its PTS (`Fingerprint`, 16 bytes). Kept
/// whole, the last 4,096 keys held their payloads' strings, which no one else still used: about
/// 1.6 MB a channel once it had metered 70 minutes at a tag a second (docs/PERFORMANCE.md).
struct DuplicateFilter {
    private var delivered: RecentFingerprints
    private var previousPayload: Fingerprint?

    init(capacity: Int = 4_096) { delivered = RecentFingerprints(capacity: capacity) }

    /// Records the tag and tells whether it is new.
    mutating func admit(payload: String, pts: Int64?) -> Bool {
        let alone = Fingerprint(payload), key = Fingerprint(payload, pts: pts)
        guard alone != previousPayload, !delivered.contains(key) else { return false }
        previousPayload = alone
        delivered.insert(key)
        return true
    }
}
