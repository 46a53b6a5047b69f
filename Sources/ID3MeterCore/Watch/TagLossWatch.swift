/// Tells when a channel's Nielsen tags have stopped, as a pure model of time: every minute
/// without a creditable tag is audience nobody credits, whatever the cause (an encoder that
/// lost its watermark feed, segments failing, a CDN serving a stale playlist), and names the
/// cause apart from what the meter saw: a playlist that does not answer, one that answers and
/// does not advance, one that advances while its segments fail (docs/RELIABILITY.md's table).
///
/// Times are seconds on whatever clock the caller runs (`now` since the channel started, say);
/// the model never reads a clock, so tests drive it with any times they like.
package struct TagLossWatch: Sendable {
    public enum Alert: String, Sendable, CaseIterable, Comparable {
        /// No Nielsen tag delivered for `alertAfter` seconds, from the start too.
        case noTags = "no_tags"
        /// Tags arrive, but only invalid ones or ones with the placeholder CID.
        case onlyUncreditableTags = "only_uncreditable_tags"
        /// The playlist (or MPD) cannot be had: its reloads fail (a status, a timeout, TLS, DNS),
        /// from the first failed reload until one succeeds.
        case playlistUnreachable = "playlist_unreachable"
        /// A live playlist answers and has not listed a new segment for three target durations.
        case playlistStale = "playlist_stale"
        /// The playlist advances, and its segments fail: from the first segment given up on until
        /// one is read.
        case segmentsFailing = "segments_failing"
        /// The stream is read from a redundant copy, not the master playlist's first choice:
        /// its first host failed, and there is no spare left if this one does.
        case onBackup = "on_backup"
        /// The stream could not be opened, from its first failed attempt until one succeeds; or
        /// its segments come and do not parse (an error page served with 200, a wrong key),
        /// from the first until one does: with it, a collector's report tells an unreadable
        /// stream from an unreachable one, and from a meter gone silent.
        case streamUnreadable = "stream_unreadable"

        public static func < (lhs: Alert, rhs: Alert) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// An alert starting or ending, at the time the watch saw it.
    public struct Change: Sendable, Equatable {
        public var alert: Alert
        public var active: Bool
        public var at: Double

        public init(alert: Alert, active: Bool, at: Double) {
            self.alert = alert
            self.active = active
            self.at = at
        }
    }

    public let alertAfter: Double
    public private(set) var active: Set<Alert> = []
    /// When a Nielsen tag was last delivered.
    public private(set) var lastTag: Double?
    private var lastCreditable: Double?
    /// When the playlist last listed a new segment (read or not).
    private var lastSegment: Double?
    private var staleAfter: Double?
    private var reloadsFailing = false
    /// Segments given up on since the last one read: those that could not be had, and those
    /// whose bytes did not parse.
    public private(set) var failingSegments = 0
    public private(set) var unparsedSegments = 0
    private var onBackup = false
    private var unreadable = false
    private var ended = false
    private let start: Double

    public init(alertAfter: Double = 30, start: Double = 0) {
        self.alertAfter = alertAfter
        self.start = start
    }

    /// The source is open: a live stream is expected to bring a segment every target duration.
    public mutating func opened(isLive: Bool, targetDuration: Double?, at now: Double) {
        staleAfter = isLive ? targetDuration.map { 3 * $0 } : nil
        lastSegment = now
        unreadable = false
        reloadsFailing = false
        failingSegments = 0
        unparsedSegments = 0
        ended = false
    }

    /// An attempt to open the stream failed: unreadable until `opened`.
    public mutating func failedToOpen() {
        unreadable = true
    }

    public mutating func delivered(_ tag: NielsenTag, at now: Double) {
        lastTag = now
        if tag.isCreditable { lastCreditable = now }
    }

    public mutating func segmentRead(at now: Double) {
        lastSegment = now
        failingSegments = 0
        unparsedSegments = 0
        reloadsFailing = false
    }

    /// A segment the playlist listed could not be read, after its retries: the playlist
    /// advanced, the segment failed. `unparsable`: its bytes came and are of no form read.
    public mutating func segmentFailed(at now: Double, unparsable: Bool = false) {
        lastSegment = now
        if unparsable { unparsedSegments += 1 } else { failingSegments += 1 }
        reloadsFailing = false
    }

    /// The stream ended, as it was meant to (a VOD channel): nothing more is due, so no alert
    /// holds, until it is `opened` again.
    public mutating func streamEnded() {
        ended = true
    }

    /// A reload of the playlist failed (`true`, after its retries) or succeeded again (`false`).
    public mutating func playlistFailing(_ failing: Bool) {
        reloadsFailing = failing
    }

    /// The stream is read from a redundant copy (`onBackup`), or from its first choice again.
    public mutating func pathChanged(onBackup: Bool) {
        self.onBackup = onBackup
    }

    /// The alerts that started or ended by `now`, in a fixed order.
    public mutating func check(at now: Double) -> [Change] {
        var due: Set<Alert> = []
        // A stream that ended as meant owes nothing more (`streamEnded`).
        if !ended {
            if now - (lastTag ?? start) >= alertAfter {
                due.insert(.noTags)
            } else if now - (lastCreditable ?? start) >= alertAfter {
                due.insert(.onlyUncreditableTags)
            }
            // Stale is a playlist that answers without advancing: one that does not answer is unreachable.
            if reloadsFailing {
                due.insert(.playlistUnreachable)
            } else if let staleAfter, let lastSegment, now - lastSegment >= staleAfter {
                due.insert(.playlistStale)
            }
            if failingSegments > 0 { due.insert(.segmentsFailing) }
            if onBackup { due.insert(.onBackup) }
            if unreadable || unparsedSegments > 0 { due.insert(.streamUnreadable) }
        }
        let started = due.subtracting(active).map { Change(alert: $0, active: true, at: now) }
        let stopped = active.subtracting(due).map { Change(alert: $0, active: false, at: now) }
        active = due
        return (stopped + started).sorted { ($0.active ? 1 : 0, $0.alert) < ($1.active ? 1 : 0, $1.alert) }
    }

    /// The earliest time an alert not active now could start if nothing else happens: when to
    /// check next. `nil` when none can start by time alone; an active alert ends on an event
    /// (a tag, a segment), after which the caller checks anyway.
    public func nextCheck() -> Double? {
        guard !ended else { return nil }
        var times: [Double] = []
        if !active.contains(.noTags) {
            times.append((lastTag ?? start) + alertAfter)
            if !active.contains(.onlyUncreditableTags) { times.append((lastCreditable ?? start) + alertAfter) }
        }
        if !active.contains(.playlistStale), !reloadsFailing, let staleAfter, let lastSegment { times.append(lastSegment + staleAfter) }
        return times.min()
    }
}
