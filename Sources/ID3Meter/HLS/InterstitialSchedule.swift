import Foundation

/// When a walk plays the interstitials its playlist schedules, as players do (Apple's HLS
/// Interstitials; hls.js where that is silent): a break is played when the primary reaches its
/// `START-DATE` (on the segments' PROGRAM-DATE-TIME), `CUE=PRE` ones before the primary's first
/// segment, `CUE=POST` ones after its last; each once. The primary resumes `X-RESUME-OFFSET` after
/// the break's start (absent: the time the break played), so the primary content in between was
/// replaced: a player never shows it, and its tags are not delivered.
///
/// A walk that joins a live stream (or resumes) does not play a break that started before the
/// first segment it reads: it joined after it.
struct InterstitialSchedule {
    /// Interstitials known, by ID, in the order first listed; bounded as a playlist's are.
    private var known: [String: Interstitial] = [:]
    private var order: [String] = []
    private var done: Set<String> = []
    /// The primary content breaks replaced: from their start to where the primary resumed.
    private var replaced: [Range<Date>] = []
    private var started = false

    /// Takes what a playlist load lists (a later listing of an ID replaces the earlier).
    mutating func learn(_ interstitials: [Interstitial]) {
        for interstitial in interstitials {
            if known.updateValue(interstitial, forKey: interstitial.id) == nil { order.append(interstitial.id) }
        }
        // Forget the oldest of those already played: a week-long stream schedules thousands.
        while order.count > PlaylistParser.maximumInterstitials, let oldest = order.first(where: { done.contains($0) }) {
            order.removeAll { $0 == oldest }
            known[oldest] = nil
        }
    }

    /// The breaks due before the primary segment that starts at `date`: at the first segment, the
    /// `PRE` ones (and, unless `joined`, those scheduled at or before it); then those whose start
    /// the primary has reached.
    mutating func due(beforeSegmentAt date: Date?, joined: Bool) -> [Interstitial] {
        var due: [Interstitial] = []
        if !started {
            started = true
            due += pending.filter { $0.cue.contains(.pre) }
            if joined, let date {
                // Joined after these began: a player that joins here never plays them.
                for interstitial in pending where !interstitial.cue.contains(.pre) && interstitial.startDate < date { done.insert(interstitial.id) }
            }
        }
        if let date {
            due += pending.filter { !$0.cue.contains(.pre) && !$0.cue.contains(.post) && $0.startDate.timeIntervalSince(date) <= Self.tolerance }
                .filter { candidate in !due.contains { $0.id == candidate.id } }
                .sorted { $0.startDate < $1.startDate }
        }
        due.forEach { done.insert($0.id) }
        return due
    }

    /// The `POST` breaks, played when the primary has ended.
    mutating func afterTheEnd() -> [Interstitial] {
        let due = pending.filter { $0.cue.contains(.post) }
        due.forEach { done.insert($0.id) }
        return due
    }

    /// `interstitial` played for `seconds`: the primary from its start to its resumption is
    /// replaced. Breaks at one start play one after another, and their offsets add up: the
    /// primary resumes after all of them (hls.js: "X-RESUME-OFFSET values of interstitials
    /// scheduled at the same time are cumulative").
    mutating func played(_ interstitial: Interstitial, for seconds: Double) {
        guard !interstitial.cue.contains(.pre), !interstitial.cue.contains(.post) else { return }
        let resume = interstitial.resumeOffset ?? seconds
        guard resume > 0 else { return }
        let start = interstitial.startDate
        if let last = replaced.last, abs(last.lowerBound.timeIntervalSince(start)) <= Self.tolerance {
            replaced[replaced.count - 1] = last.lowerBound..<last.upperBound.addingTimeInterval(resume)
            return
        }
        replaced.append(start..<start.addingTimeInterval(resume))
        if replaced.count > PlaylistParser.maximumInterstitials { replaced.removeFirst() }
    }

    /// Whether the primary's media at `date` was replaced by a break.
    func isReplaced(_ date: Date) -> Bool {
        replaced.contains { $0.lowerBound.timeIntervalSince(date) <= Self.tolerance && date < $0.upperBound.addingTimeInterval(-Self.tolerance) }
    }

    /// Whether the whole of the primary segment from `date`, `duration` seconds long, was replaced.
    func replacesSegment(at date: Date?, duration: Double) -> Bool {
        guard let date else { return false }
        return replaced.contains { date.timeIntervalSince($0.lowerBound) >= -Self.tolerance
            && date.addingTimeInterval(duration).timeIntervalSince($0.upperBound) <= Self.tolerance }
    }

    /// Dates within a millisecond are the same place (PROGRAM-DATE-TIME has milliseconds).
    private static let tolerance = 0.001

    private var pending: [Interstitial] { order.compactMap { known[$0] }.filter { !done.contains($0.id) } }
}
