import Synchronization

/// How many tags' details (payload fields, notes: a few hundred bytes each) a whole report keeps,
/// shared by the sources scanned at once: a report over a million tags stays a file a browser
/// opens, and a scan's memory does not grow with every payload. Flagged tags (invalid, placeholder
/// PC CID), the ones a QA engineer opens, have a budget of their own, so valid ones never spend it.
package final class DetailBudget: Sendable {
    public let limit: Int
    private let valid = Atomic(0)
    private let flagged = Atomic(0)

    /// `limit` details of valid tags, and as many of flagged ones.
    public init(limit: Int) { self.limit = limit }

    /// Takes one detail from the budget; `false` once it is spent.
    func take(flagged isFlagged: Bool) -> Bool {
        let taken = isFlagged ? flagged.add(1, ordering: .relaxed) : valid.add(1, ordering: .relaxed)
        return taken.newValue <= limit
    }
}
