import Foundation

/// When a walk plays the interstitials its playlist schedules, as players do (Apple's HLS
/// Interstitials; hls.js where that is silent): a break is played when the primary reaches its
/// `START-DATE` (on the segments' PROGRAM-DATE-TIME), `CUE=PRE` ones before the primary's first
/// segment, `CUE=POST` ones after its last; each once. The primary resumes `X-RESUME-OFFSET` after
/// the break's start (absent: the time the break played), so the primary content in between was
/// replaced: a player never shows it, and its tags are not delivered. `X-SNAP` moves where the
/// primary is left (`OUT`) and rejoined (`IN`) to the segment boundary closest to each; without
/// it, a `START-DATE` or a resumption inside a segment divides it, and the walk plays its parts
/// around the break (`dueInside`, `resumption`).
///
/// A walk that joins a live stream (or resumes) inside a break's stretch of the primary (from its
/// start to its resumption) plays the break from that far in, as hls.js does (`_HLS_start_offset`);
/// one whose stretch ended before the first segment it reads is not played: it joined after it.
struct InterstitialSchedule {
    /// Interstitials known, by ID, in the order first listed; bounded as a playlist's are.
    private var known: [String: Interstitial] = [:]
    private var order: [String] = []
    private var done: Set<String> = []
    /// The primary content breaks replaced: from where the primary was left to where it resumed.
    private var replaced: [Replaced] = []
    /// Where an `X-SNAP=OUT` break left the primary: the boundary it was due at, by ID.
    private var outPoints: [String: Date] = [:]
    /// How far into a break a live join came (seconds), by ID: it is played from there.
    private var joinedInto: [String: Double] = [:]
    private var started = false
    /// Where a presentation read from its start begins: its pre-rolls replace the primary from
    /// there (a live join's resume where it joined).
    private var preRollsAt: Date?

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

    /// The primary content a break replaced; `snapsIn`: its end is still to move to the segment
    /// boundary closest to it (`X-SNAP=IN`), once the segment that holds it comes.
    private struct Replaced {
        var range: Range<Date>
        var snapsIn: Bool
    }

    /// The breaks due before the primary segment that starts at `date`, `duration` long: at the
    /// first segment, the `PRE` ones (and, unless `joined`, those scheduled at or before it);
    /// then those whose start the primary has reached, and an `X-SNAP=OUT` one whose start is
    /// nearer this segment's start than its end.
    mutating func due(beforeSegmentAt date: Date?, duration: Double = 0, joined: Bool) -> [Interstitial] {
        var due: [Interstitial] = []
        if !started {
            started = true
            due += pending.filter { $0.cue.contains(.pre) }
            if !joined { preRollsAt = date }
            if joined, let date {
                for interstitial in pending where !interstitial.cue.contains(.pre) && interstitial.startDate < date {
                    // Its stretch of the primary: to its resumption (absent: its DURATION), as hls.js places it.
                    let stretch = interstitial.resumeOffset ?? interstitial.duration ?? 0
                    let into = date.timeIntervalSince(interstitial.startDate)
                    if into < stretch - Self.tolerance, !interstitial.cue.contains(.post) {
                        joinedInto[interstitial.id] = into
                    } else {
                        // Over before the join: a player that joins here never plays it.
                        done.insert(interstitial.id)
                    }
                }
            }
        }
        if let date {
            let reached = pending.filter { interstitial in
                let ahead = interstitial.startDate.timeIntervalSince(date)
                return !interstitial.cue.contains(.pre) && !interstitial.cue.contains(.post)
                    && (ahead <= Self.tolerance || interstitial.snap.contains(.out) && ahead <= duration / 2)
            }
            for interstitial in reached where interstitial.snap.contains(.out) { outPoints[interstitial.id] = date }
            due += reached.filter { candidate in !due.contains { $0.id == candidate.id } }.sorted { $0.startDate < $1.startDate }
        }
        due.forEach { done.insert($0.id) }
        return due
    }

    /// The breaks whose `START-DATE` falls inside the primary segment from `date`, `duration`
    /// long, past its start, in date order: a player leaves the primary at that date, mid-segment
    /// (hls.js, Media3, AVPlayer). Those at its start are `due` before it; `X-SNAP=OUT` ones `due`
    /// moves to a boundary.
    mutating func dueInside(segmentAt date: Date, duration: Double) -> [Interstitial] {
        let inside = pending.filter { startsInside($0, segmentAt: date, duration: duration) }.sorted { $0.startDate < $1.startDate }
        inside.forEach { done.insert($0.id) }
        return inside
    }

    /// Whether a player plays the primary segment from `date`, `duration` long, in parts: a break
    /// starts inside it, or one that replaced its start resumes inside it.
    func dividesSegment(at date: Date, duration: Double) -> Bool {
        resumption(at: date).timeIntervalSince(date) > Self.tolerance
            || pending.contains { startsInside($0, segmentAt: date, duration: duration) }
    }

    /// Where the primary is played from at `date`: `date`, or the resumption of the breaks that
    /// replaced it.
    func resumption(at date: Date) -> Date {
        var from = date
        while let covering = replaced.first(where: { $0.range.lowerBound.timeIntervalSince(from) <= Self.tolerance
            && from < $0.range.upperBound.addingTimeInterval(-Self.tolerance) }) {
            from = covering.range.upperBound
        }
        return from
    }

    private func startsInside(_ interstitial: Interstitial, segmentAt date: Date, duration: Double) -> Bool {
        let into = interstitial.startDate.timeIntervalSince(date)
        return interstitial.cue.isDisjoint(with: [.pre, .post]) && !interstitial.snap.contains(.out)
            && into > Self.tolerance && into < duration - Self.tolerance
    }

    /// How far into `interstitial` it is played from: the seconds a live join came into it.
    mutating func startOffset(of interstitial: Interstitial) -> Double {
        joinedInto.removeValue(forKey: interstitial.id) ?? 0
    }

    /// The breaks played when the primary has ended, in the order listed: the `POST` ones, and
    /// those due by then that no segment came for: a `START-DATE` at the primary's `end` (or
    /// before it, inside a gap), or just past it with `X-SNAP=OUT`, the end being its nearest
    /// boundary (within `lastDuration`, the last segment's). Media3
    /// (`HlsInterstitialsAdsLoaderTest` `handleContentTimelineChanged_3postRolls_...`) plays
    /// those three as its post-roll group; a date past the end without `X-SNAP` is not reached.
    mutating func afterTheEnd(end: Date?, lastDuration: Double) -> [Interstitial] {
        let due = pending.filter { interstitial in
            if interstitial.cue.contains(.post) { return true }
            guard !interstitial.cue.contains(.pre), let end else { return false }
            let late = interstitial.startDate.timeIntervalSince(end)
            return late <= Self.tolerance || interstitial.snap.contains(.out) && late <= lastDuration
        }
        due.forEach { done.insert($0.id) }
        return due
    }

    /// `interstitial` played for `seconds`: the primary from its start to its resumption is
    /// replaced. Breaks at one start play one after another, and their offsets add up: the
    /// primary resumes after all of them (hls.js: "X-RESUME-OFFSET values of interstitials
    /// scheduled at the same time are cumulative").
    ///
    /// A pre-roll of a presentation read from its start replaces the primary's first seconds
    /// as a mid-roll does, its offset absent its duration: Media3 (`HlsInterstitialsAdsLoader`)
    /// and hls.js resume a VOD pre-roll so. On a live join the primary resumes where it joined
    /// (hls.js). A post-roll replaces nothing, nor does a break of which nothing could be had
    /// (`seconds` `nil`): players drop it from their schedule and play the primary under it
    /// (hls.js, `primaryFallback`).
    mutating func played(_ interstitial: Interstitial, for seconds: Double?) {
        let leftAt = outPoints.removeValue(forKey: interstitial.id)
        guard !interstitial.cue.contains(.post), let seconds else { return }
        let resume = interstitial.resumeOffset ?? seconds
        guard resume > 0, let start = interstitial.cue.contains(.pre) ? preRollsAt : interstitial.startDate else { return }
        let snapsIn = interstitial.snap.contains(.in)
        // Left at its out point (an `X-SNAP=OUT` boundary), resumed `resume` after its start.
        let left = leftAt ?? start
        if let last = replaced.last, abs(last.range.lowerBound.timeIntervalSince(left)) <= Self.tolerance {
            replaced[replaced.count - 1] = Replaced(range: last.range.lowerBound..<last.range.upperBound.addingTimeInterval(resume),
                                                    snapsIn: last.snapsIn || snapsIn)
            return
        }
        let end = start.addingTimeInterval(resume)
        guard end > left else { return }
        replaced.append(Replaced(range: left..<end, snapsIn: snapsIn))
        if replaced.count > PlaylistParser.maximumInterstitials { replaced.removeFirst() }
    }

    /// Whether the primary's media at `date` was replaced by a break.
    func isReplaced(_ date: Date) -> Bool {
        replaced.contains { $0.range.lowerBound.timeIntervalSince(date) <= Self.tolerance && date < $0.range.upperBound.addingTimeInterval(-Self.tolerance) }
    }

    /// Whether the whole of the primary segment from `date`, `duration` seconds long, was
    /// replaced. An `X-SNAP=IN` resumption point inside it moves first to the nearer of its
    /// boundaries: the segment is then played whole, or not at all.
    mutating func replacesSegment(at date: Date?, duration: Double) -> Bool {
        guard let date else { return false }
        let end = date.addingTimeInterval(duration)
        for index in replaced.indices where replaced[index].snapsIn {
            let resume = replaced[index].range.upperBound
            // A later segment holds it.
            guard resume < end else { continue }
            if resume > date {
                let boundary = resume.timeIntervalSince(date) <= end.timeIntervalSince(resume) ? date : end
                replaced[index].range = replaced[index].range.lowerBound..<max(boundary, replaced[index].range.lowerBound)
            }
            replaced[index].snapsIn = false
        }
        return replaced.contains { date.timeIntervalSince($0.range.lowerBound) >= -Self.tolerance
            && end.timeIntervalSince($0.range.upperBound) <= Self.tolerance }
    }

    /// Dates within a millisecond are the same place (PROGRAM-DATE-TIME has milliseconds).
    static let tolerance = 0.001

    private var pending: [Interstitial] { order.compactMap { known[$0] }.filter { !done.contains($0.id) } }
}
