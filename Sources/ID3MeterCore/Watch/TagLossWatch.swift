/// Tells when a channel's Nielsen tags have stopped, as a pure model of time: every minute
/// without a creditable tag is audience nobody credits, whatever the cause (an encoder that
/// lost its watermark feed, segments failing, a CDN serving a stale playlist).
///
/// Times are seconds on whatever clock the caller runs (`now` since the channel started, say);
/// the model never reads a clock, so tests drive it with any times they like.
package struct TagLossWatch: Sendable {
    public enum Alert: String, Sendable, CaseIterable, Comparable {
        /// No Nielsen tag delivered for `alertAfter` seconds, from the start too.
        case noTags = "no_tags"
        /// Tags arrive, but only invalid ones or ones with the placeholder CID.
        case onlyUncreditableTags = "only_uncreditable_tags"
        /// A live playlist has not brought a new segment for three target durations.
        case playlistStale = "playlist_stale"
        /// The stream is read from a redundant copy, not the master playlist's first choice:
        /// its first host failed, and there is no spare left if this one does.
        case onBackup = "on_backup"
        /// The stream could not be opened, from its first failed attempt until one succeeds:
        /// with it, a collector's report tells an unreadable stream from a meter gone silent.
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
    private var lastSegment: Double?
    private var staleAfter: Double?
    private var onBackup = false
    private var unreadable = false
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
    }

    /// The stream is read from a redundant copy (`onBackup`), or from its first choice again.
    public mutating func pathChanged(onBackup: Bool) {
        self.onBackup = onBackup
    }

    /// The alerts that started or ended by `now`, in a fixed order.
    public mutating func check(at now: Double) -> [Change] {
        var due: Set<Alert> = []
        if now - (lastTag ?? start) >= alertAfter {
            due.insert(.noTags)
        } else if now - (lastCreditable ?? start) >= alertAfter {
            due.insert(.onlyUncreditableTags)
        }
        if let staleAfter, let lastSegment, now - lastSegment >= staleAfter { due.insert(.playlistStale) }
        if onBackup { due.insert(.onBackup) }
        if unreadable { due.insert(.streamUnreadable) }
        let started = due.subtracting(active).map { Change(alert: $0, active: true, at: now) }
        let ended = active.subtracting(due).map { Change(alert: $0, active: false, at: now) }
        active = due
        return (ended + started).sorted { ($0.active ? 1 : 0, $0.alert) < ($1.active ? 1 : 0, $1.alert) }
    }

    /// The earliest time an alert not active now could start if nothing else happens: when to
    /// check next. `nil` when none can start by time alone; an active alert ends on an event
    /// (a tag, a segment), after which the caller checks anyway.
    public func nextCheck() -> Double? {
        var times: [Double] = []
        if !active.contains(.noTags) {
            times.append((lastTag ?? start) + alertAfter)
            if !active.contains(.onlyUncreditableTags) { times.append((lastCreditable ?? start) + alertAfter) }
        }
        if !active.contains(.playlistStale), let staleAfter, let lastSegment { times.append(lastSegment + staleAfter) }
        return times.min()
    }
}
