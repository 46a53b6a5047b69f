import Synchronization

/// How many tags' details (payload fields, notes: a few hundred bytes each) a whole report keeps,
/// shared by the sources scanned at once: a report over a million tags stays a file a browser
/// opens, and a scan's memory does not grow with every payload.
public final class DetailBudget: Sendable {
    public let limit: Int
    private let taken = Atomic(0)

    public init(limit: Int) { self.limit = limit }

    /// Takes one detail from the budget; `false` once it is spent.
    func take() -> Bool {
        taken.add(1, ordering: .relaxed).newValue <= limit
    }
}
