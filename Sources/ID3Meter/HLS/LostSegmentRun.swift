/// Segments lost in a row on one playlist, held to `Fetcher.Limits.maximumConsecutiveLostSegments`:
/// the one rule of every walk. At the limit a playlist that will not change is given up (the
/// rest of it would most likely fail too); a live one is still followed, since the stream may
/// come back, and the limit is told once per run of losses.
struct LostSegmentRun {
    enum Verdict {
        case goOn
        case stillFollowing(lost: Int)
        case giveUp(lost: Int)

        /// The segments lost in a row, when the run has reached the limit.
        var lostAtLimit: Int? {
            switch self {
            case .goOn: nil
            case .stillFollowing(let lost), .giveUp(let lost): lost
            }
        }
    }

    let limit: Int
    private var count = 0
    /// The media sequence of the first segment of the run.
    private(set) var firstLost: Int?

    init(limit: Int) { self.limit = limit }

    mutating func record(_ sequence: Int, read: Bool, finite: Bool) -> Verdict {
        count = read ? 0 : count + 1
        firstLost = read ? nil : firstLost ?? sequence
        guard count == limit else { return .goOn }
        return finite ? .giveUp(lost: count) : .stillFollowing(lost: count)
    }
}
