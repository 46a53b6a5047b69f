import DequeModule

/// What following a playlist yields, in media-sequence order.
indirect enum PlaylistEvent: Sendable {
    /// A segment not seen before.
    case segment(Segment)
    /// The interstitials a load of the playlist schedules (before the segments it brought).
    case interstitials([Interstitial])
    /// Segments that left the sliding window before they could be fetched, by media sequence.
    case gap(ClosedRange<Int>)
    /// Where following from a checkpoint (`resumeAt`) started, before the first segment.
    case resumed(Resumption)
    /// The media sequence went back (an encoder or origin restart): the follower reads on from
    /// the first segment it had not read, `to`, after `from`, the last it had.
    case sequenceWentBack(from: Int, to: Int)
    /// The media sequence jumped further than the time since the last reload could have made
    /// segments, or to segments already read: renumbered, not lost. Read on from `to`.
    case renumbered(from: Int, to: Int)
    /// EXT-X-DISCONTINUITY-SEQUENCE went back from `from` to `to`.
    case discontinuityWentBack(from: Int, to: Int)
    /// A reload failed; the follower waits and tries again.
    case reloadFailed(SegmentLoadError)
    /// A reload succeeded after `afterFailures` failed ones in a row.
    case reloadRecovered(afterFailures: Int)
    /// The playlist is read from `to` now, a copy of `from` on another host or pathway
    /// (`onBackup` unless it is the copy to prefer), at the same media sequence.
    case switched(from: String, to: String, onBackup: Bool, because: InputFailure.PathSwitch)
    /// The content-steering manifest could not be had or read: the pathway in use is kept, and
    /// it is asked for again after its TTL.
    case steeringFailed(SegmentLoadError)
}

/// Follows a media playlist the way RFC 8216 §6.3.4 asks of a client: reload no sooner than
/// the target duration after the last load began, or half of it after a reload that brought
/// nothing new; track the sliding window by media sequence so that no segment is yielded twice
/// and a skipped one is reported; stop at EXT-X-ENDLIST. A VOD playlist is one that never
/// reloads, and so is a live one read as it stands (`reloads: false`, a scan's snapshot).
///
/// Packagers and origins break the rules, so the sequence numbers are checked against the
/// segments' URIs and the clock: a sequence that went back is read on from the first segment not
/// read yet (an older copy of the playlist brings none and is waited out); a jump forward is a
/// gap only when it is no bigger than the time since the last load could have filled and its
/// first segment is new, else the stream was renumbered and nothing is taken as lost.
///
/// Its events are pulled: a reload waits until the segments before it were taken, as a player
/// fetches the next playlist once it has queued the last one's segments.
///
/// Where the server offers blocking reloads (LL-HLS `CAN-BLOCK-RELOAD=YES`), a reload asks for
/// the next segment (`_HLS_msn`) as soon as the last is taken and the server answers when it is
/// there, rather than being polled; under `CAN-SKIP-UNTIL` it asks for a delta update
/// (`_HLS_skip=YES`) that leaves out the segments already read. Partial segments are not
/// fetched: full segments carry every tag, and what meters them needs no lower latency.
///
/// A variant served redundantly (several hosts or pathways) is followed from one copy at a
/// time; when its reloads fail twice in a row, or the reader cannot get its segments
/// (`Iterator.failOver`), the next copy is loaded at once and followed from the same media
/// sequence, as players do: the copies list the same segments under the same numbers. Under a
/// content-steering server, its manifest is asked for before the first reload and again after
/// each TTL, and the copy on its first pathway is the one to be on.
struct PlaylistFollower<C: Clock>: AsyncSequence, Sendable where C.Duration == Duration {
    typealias Element = PlaylistEvent

    /// The media playlist followed, and its first load (made when the variant was chosen).
    var location: String
    var first: MediaPlaylist
    var loader: PlaylistLoader
    /// Segments back from the live edge to start with (a VOD starts at its first segment).
    var liveStart: Int
    /// The media sequence of the segment to start at instead, when it is still listed (a
    /// meter restarted from a checkpoint); the live edge otherwise.
    var resumeAt: Int?
    /// `false` reads the segments `first` lists, from its first, and ends: a live playlist as
    /// it stands.
    var reloads: Bool
    var clock: C
    /// A copy of the media playlist: its URI, and the content-steering pathway it is on.
    struct Copy: Sendable {
        var uri: String
        var pathway: String?
    }

    /// The pathway `location` is on.
    var pathway: String?
    /// Redundant copies of the playlist, in the order to try them after `location`.
    var backups: [Copy] = []
    /// The master playlist the copies were listed in: each must be one it may reference.
    var master: String?
    /// The master playlist's content-steering server.
    var steeringServer: String?
    /// The master playlist's variables, which each reload may import (`EXT-X-DEFINE:IMPORT`).
    var imports: [String: String] = [:]

    /// Reloads failed in a row before a redundant copy is tried.
    static var reloadFailuresBeforeSwitching: Int { 2 }

    /// A follower of the media playlist at `location`, joining `liveStart` segments from a live end.
    init(location: String, first: MediaPlaylist, loader: PlaylistLoader, liveStart: Int = 3, resumeAt: Int? = nil,
                reloads: Bool = true, clock: C) {
        self.location = location
        self.first = first
        self.loader = loader
        self.liveStart = liveStart
        self.resumeAt = resumeAt
        self.reloads = reloads
        self.clock = clock
    }

    /// Whether it ends with the segments it lists now.
    var isFinite: Bool { !reloads || first.hasEndList }

    func makeAsyncIterator() -> Iterator { Iterator(self) }

    struct Iterator: AsyncIteratorProtocol {
        private let follower: PlaylistFollower
        /// The playlist and its copies; `path` is the one read.
        private let paths: [Copy]
        private var path = 0
        /// The copy to be on: the first, or the steering server's first pathway.
        private var preferred = 0
        /// Just switched: a copy still behind the one left is waited for, not read as a step back.
        private var switched = false
        private var loadNow = false
        /// Where the steering manifest is asked for next, and when.
        private var steeringURI: String?
        private var steeringDue: C.Instant
        /// A playlist loaded and not yet looked at.
        private var loaded: MediaPlaylist?
        private var pending = Deque<PlaylistEvent>()
        private var next: Int?
        private var resuming: Int?
        private var read = RecentSegments()
        private var discontinuity: Int?
        private var lastLoad: C.Instant
        private var loadStarted: C.Instant
        /// The last playlist's target duration, and whether it brought a segment.
        private var target: Double
        /// The last playlist's server control: blocking reloads, delta updates.
        private var canBlockReload = false
        private var canSkipUntil: Double?
        private var changed = false
        private var ended = false
        private var failures = 0

        init(_ follower: PlaylistFollower) {
            self.follower = follower
            paths = [Copy(uri: follower.location, pathway: follower.pathway)] + follower.backups
            steeringURI = follower.master == nil ? nil : follower.steeringServer
            steeringDue = follower.clock.now
            loaded = follower.first
            resuming = follower.resumeAt
            lastLoad = follower.clock.now
            loadStarted = lastLoad
            target = follower.first.targetDuration
        }

        mutating func next() async -> PlaylistEvent? {
            while true {
                if let event = pending.popFirst() { return event }
                if ended || Task.isCancelled { return nil }
                if let playlist = loaded {
                    loaded = nil
                    take(playlist)
                } else {
                    await reload()
                }
            }
        }

        /// The events of a playlist just loaded.
        private mutating func take(_ playlist: MediaPlaylist) {
            loadStarted = follower.clock.now
            if switched, let next, let last = playlist.lastSequence, last < next - 1 {
                // The copy has not caught up: nothing new yet, and nothing to read again.
                changed = false
                if playlist.hasEndList || !follower.reloads { ended = true }
                return
            }
            switched = false
            if next == nil {
                let listed = playlist.skippedSegments + playlist.segments.count
                let fromFirst = playlist.hasEndList || !follower.reloads
                next = fromFirst ? playlist.mediaSequence : playlist.mediaSequence + Swift.max(0, listed - Swift.max(follower.liveStart, 1))
            }
            // Decided on the first playlist that lists a segment to tell by.
            if let sequence = resuming, let resumption = PlaylistFollower.resumption(at: sequence, joining: next!, playlist) {
                resuming = nil
                if case .atSegment(let sequence) = resumption { next = sequence }
                pending.append(.resumed(resumption))
            }
            if let event = PlaylistFollower.renumbering(expected: next!, playlist, read: read, since: lastLoad.duration(to: loadStarted)) {
                pending.append(event)
                switch event {
                case .sequenceWentBack(_, let to), .renumbered(_, let to): next = to
                case .gap(let sequences): next = sequences.upperBound + 1
                default: break
                }
            }
            lastLoad = loadStarted
            changed = false
            if !playlist.interstitials.isEmpty { pending.append(.interstitials(playlist.interstitials)) }
            for segment in playlist.segments where segment.mediaSequence >= next! {
                if let previous = discontinuity, segment.discontinuitySequence < previous {
                    pending.append(.discontinuityWentBack(from: previous, to: segment.discontinuitySequence))
                }
                discontinuity = segment.discontinuitySequence
                read.insert(segment)
                pending.append(.segment(segment))
                next = segment.mediaSequence + 1
                changed = true
            }
            target = playlist.targetDuration
            canBlockReload = playlist.canBlockReload
            canSkipUntil = playlist.canSkipUntil
            if playlist.hasEndList || !follower.reloads { ended = true }
        }

        /// Waits for the next load's time, then loads once: a failure is an event, and the next
        /// try comes after a back-off.
        private mutating func reload() async {
            let interval = Duration.seconds(Swift.max(target, 0.5))
            let clock = follower.clock
            var location = paths[path].uri
            // A blocking reload is asked for at once, unless the last one brought nothing (a
            // server that does not hold the answer is not asked again and again).
            var blocking = canBlockReload && !switched && resuming == nil && Location.transport(of: location) == .http
            if loadNow {
                loadNow = false
            } else if failures == 0 {
                if !(blocking && changed) {
                    try? await clock.sleep(until: loadStarted.advanced(by: changed ? interval : interval / 2), tolerance: nil)
                }
            } else {
                // Back off up to four target durations; a live window outlasts a short outage.
                try? await clock.sleep(for: Backoff(first: interval, maximum: interval * 4).delay(after: failures), tolerance: nil)
            }
            guard !Task.isCancelled else { return }
            if steeringURI != nil, clock.now >= steeringDue {
                await steer()
                if paths[path].uri != location {
                    // Steered to another copy: loaded now, and not yet in the blocking rhythm.
                    location = paths[path].uri
                    blocking = false
                    loadNow = false
                }
            }
            do {
                // Only what is new is made, once where to start is known; a sequence that
                // went back needs the whole list to find what was not read.
                let floor = resuming == nil ? next : nil
                // RFC 8216bis 6.3.7: a delta update only while what was loaded last is no older than half the skip boundary.
                let skip = blocking && canSkipUntil.map { loadStarted.duration(to: clock.now) < .seconds($0 / 2) } == true
                let asked = blocking ? Self.deliveryDirectives(location, segment: floor, skip: skip) : location
                var playlist = try await follower.loader.loadMedia(asked, referencedBy: follower.master, targetDuration: target,
                                                                   keeping: floor.map { .from($0) } ?? .all, imports: follower.imports)
                // A delta that leaves out a segment not read yet, or a list that went back, is asked for whole.
                let skippedUnread = playlist.segments.first.map { first in floor.map { first.mediaSequence > $0 } ?? false } ?? false
                let wentBack = playlist.lastSequence.map { last in floor.map { last < $0 - 1 } ?? false } ?? false
                if floor != nil, playlist.skippedSegments > 0, wentBack || skip && skippedUnread {
                    playlist = try await follower.loader.loadMedia(location, referencedBy: follower.master, targetDuration: target,
                                                                   imports: follower.imports)
                }
                if failures > 0 { pending.append(.reloadRecovered(afterFailures: failures)) }
                failures = 0
                loaded = playlist
            } catch {
                failures += 1
                pending.append(.reloadFailed(error))
                if paths.count > 1, failures >= PlaylistFollower.reloadFailuresBeforeSwitching {
                    switchPath(because: .reloadsFailed(error))
                }
            }
        }

        /// Segments from `sequence` on could not be read: read on from the next copy of the
        /// playlist, from `sequence`, what it still lists. `false` when there is no copy.
        mutating func failOver(from sequence: Int, because reason: InputFailure.PathSwitch) -> Bool {
            guard paths.count > 1 else { return false }
            rewind(to: sequence)
            switchPath(because: reason)
            return true
        }

        /// Just switched to a copy: its segments from `sequence` on are read, though the copy
        /// left listed them (they failed there).
        mutating func rewind(to sequence: Int) {
            pending.removeAll { if case .segment = $0 { true } else { false } }
            next = Swift.min(next ?? sequence, sequence)
            ended = false
        }

        /// `location` asking for segment `segment` (held until it is there) and, with `skip`, a delta update.
        static func deliveryDirectives(_ location: String, segment: Int?, skip: Bool) -> String {
            let directives = (segment.map { ["_HLS_msn=\($0)"] } ?? []) + (skip ? ["_HLS_skip=YES"] : [])
            guard !directives.isEmpty else { return location }
            return location + (location.contains("?") ? "&" : "?") + directives.joined(separator: "&")
        }

        /// Asks the steering server which pathway to use, telling it the one in use; the copy on
        /// the first of its pathways that the master lists becomes the one to be on.
        private mutating func steer() async {
            guard let uri = steeringURI, let master = follower.master else { return }
            // A legal pathway ID is letters, digits, '.', '-' and '_': nothing else goes into the query.
            let pathway = String((paths[path].pathway ?? "").filter { $0.isASCII && ($0.isLetter || $0.isNumber || ".-_".contains($0)) })
            let asked = uri + (uri.contains("?") ? "&" : "?") + "_HLS_pathway=" + pathway
            do {
                let manifest = try await follower.loader.loadSteering(asked, referencedBy: master, targetDuration: target)
                steeringDue = follower.clock.now.advanced(by: .seconds(manifest.timeToLive))
                if let reload = manifest.reloadURI { steeringURI = Location.resolve(reload, against: uri) }
                let paths = self.paths
                let first = manifest.pathwayPriority.lazy.compactMap { pathway in paths.firstIndex { $0.pathway == pathway } }.first
                if let first {
                    preferred = first
                    if first != path { switchPath(to: first, because: .steered(pathway: paths[first].pathway ?? "")) }
                }
            } catch {
                steeringDue = follower.clock.now.advanced(by: .seconds(SteeringManifest.defaultTimeToLive))
                pending.append(.steeringFailed(error))
            }
        }

        private mutating func switchPath(to next: Int? = nil, because reason: InputFailure.PathSwitch) {
            let from = paths[path].uri
            path = next ?? (path + 1) % paths.count
            pending.append(.switched(from: from, to: paths[path].uri, onBackup: path != preferred, because: reason))
            failures = 0
            switched = true
            loadNow = true
            loaded = nil
        }
    }

    /// What a reloaded `playlist` says of the sequence, when it is not the next one expected:
    /// a gap, a step back, or a renumbering (see the type's comment); `nil` when it goes on as it
    /// should, or is an older copy with nothing new. `elapsed` is the time since the load before.
    static func renumbering(expected: Int, _ playlist: MediaPlaylist, read: RecentSegments, since elapsed: Duration) -> PlaylistEvent? {
        guard let last = playlist.lastSequence else { return nil }
        let unread = playlist.segments.first { !read.contains($0) }
        if last < expected - 1 {
            return unread.map { .sequenceWentBack(from: expected - 1, to: $0.mediaSequence) }
        }
        // Past the expected one, nothing was skipped: the first segment made is the first listed.
        guard playlist.mediaSequence > expected, let first = playlist.segments.first else { return nil }
        // A segment lasts at least its shortest EXTINF here; one more for the edge that moved as the load began.
        let shortest = Swift.max(playlist.segments.map(\.duration).min() ?? playlist.targetDuration, 0.1)
        let possible = Int((elapsed.seconds / shortest).rounded(.up)) + playlist.segments.count + 1
        if first.mediaSequence - expected > possible || read.contains(first) {
            return .renumbered(from: expected - 1, to: unread?.mediaSequence ?? last + 1)
        }
        return .gap(expected...(first.mediaSequence - 1))
    }

    /// Where to pick up from segment `sequence`, given the playlist and where a plain join
    /// would start; `nil` while the playlist lists nothing to tell by.
    static func resumption(at sequence: Int, joining join: Int, _ playlist: MediaPlaylist) -> Resumption? {
        guard let first = playlist.segments.first?.mediaSequence, let last = playlist.segments.last?.mediaSequence else { return nil }
        if (first...last).contains(sequence) { return .atSegment(sequence) }
        if sequence > last { return .sequenceWentBack(to: join) }
        guard sequence + 1 < join else { return .atLiveEdge(lost: nil, seconds: 0) }
        let lost = (sequence + 1)...(join - 1)
        let listed = playlist.segments.filter { lost.contains($0.mediaSequence) }.reduce(0) { $0 + $1.duration }
        let unlisted = Double(Swift.max(0, first - lost.lowerBound)) * playlist.targetDuration
        return .atLiveEdge(lost: lost, seconds: listed + unlisted)
    }
}

/// The last segments read, by URI and byte range: what tells a renumbered segment from a new
/// one, whatever number it carries. Bounded.
struct RecentSegments: Sendable {
    // Fingerprints, not the URLs: 4,096 of them are hours of segments, and their strings were
    // about 650 KB a channel by then (docs/PERFORMANCE.md).
    private var read: RecentFingerprints

    init(capacity: Int = 4_096) { read = RecentFingerprints(capacity: capacity) }

    func contains(_ segment: Segment) -> Bool { read.contains(Self.key(segment)) }

    mutating func insert(_ segment: Segment) { read.insert(Self.key(segment)) }

    private static func key(_ segment: Segment) -> Fingerprint {
        Fingerprint(segment.byteRange.map { "\(segment.uri) \($0)" } ?? segment.uri)
    }
}
