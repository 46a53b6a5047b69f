/// The Nielsen payloads seen so far in a source, to tell a repeated one. Each payload (249
/// bytes) is hashed once, as it arrives: a `Set<String>` hashes its members again each time it
/// grows, and a scan adds one per tag.
struct SeenPayloads {
    private struct Member: Hashable {
        let hash: Int
        let payload: String

        static func == (lhs: Member, rhs: Member) -> Bool { lhs.hash == rhs.hash && lhs.payload == rhs.payload }
        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    private var members = Set<Member>()

    /// Adds `payload`; `false` when it was already there.
    mutating func insert(_ payload: String) -> Bool {
        members.insert(Member(hash: payload.hashValue, payload: payload)).inserted
    }
}
