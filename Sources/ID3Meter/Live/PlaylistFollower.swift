import DequeModule

/// What following a playlist yields, in media-sequence order.
public enum PlaylistEvent: Sendable, Equatable {
    /// A segment not seen before.
    case segment(Segment)
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
}

/// Follows a media playlist the way RFC 8216 §6.3.4 asks of a client: reload no sooner than
/// the target duration after the last load began, or half of it after a reload that brought
/// nothing new; track the sliding window by media sequence so that no segment is yielded twice
/// and a skipped one is reported; stop at EXT-X-ENDLIST.
///
/// Packagers and origins break the rules, so the sequence numbers are checked against the
/// segments' URIs and the clock: a sequence that went back is read on from the first segment not
/// read yet (an older copy of the playlist brings none and is waited out); a jump forward is a
/// gap only when it is no bigger than the time since the last load could have filled and its
/// first segment is new, else the stream was renumbered and nothing is taken as lost.
public struct PlaylistFollower<C: Clock>: Sendable where C.Duration == Duration {
    /// The media playlist followed.
    public var location: String
    public var scanner: Scanner
    /// Segments back from the live edge to start with (a VOD starts at its first segment).
    public var liveStart: Int
    /// The media sequence of the segment to start at instead, when it is still listed (a
    /// meter restarted from a checkpoint); the live edge otherwise.
    public var resumeAt: Int?
    public var clock: C
    /// Called with each reload failure before the next try.
    public var onReloadFailure: @Sendable (SegmentLoadError) -> Void

    /// A follower of the media playlist at `location`, joining `liveStart` segments from a live end.
    public init(location: String, scanner: Scanner, liveStart: Int = 3, resumeAt: Int? = nil, clock: C,
                onReloadFailure: @escaping @Sendable (SegmentLoadError) -> Void = { _ in }) {
        self.location = location
        self.scanner = scanner
        self.liveStart = liveStart
        self.resumeAt = resumeAt
        self.clock = clock
        self.onReloadFailure = onReloadFailure
    }

    /// Yields events until the playlist ends or the task is cancelled; `first` is the
    /// playlist already loaded when the variant was chosen.
    public func follow(startingWith first: MediaPlaylist, yield: (PlaylistEvent) async -> Void) async {
        var playlist = first
        var next: Int?
        var resuming = resumeAt
        var failures = 0
        var read = RecentSegments()
        var lastLoad = clock.now
        var discontinuity: Int?
        while !Task.isCancelled {
            let loadStarted = clock.now
            if next == nil {
                let listed = playlist.skippedSegments + playlist.segments.count
                let join = playlist.hasEndList ? playlist.mediaSequence : playlist.mediaSequence + max(0, listed - max(liveStart, 1))
                next = join
            }
            // Decided on the first playlist that lists a segment to tell by.
            if let sequence = resuming, let resumption = Self.resumption(at: sequence, joining: next!, playlist) {
                resuming = nil
                if case .atSegment(let sequence) = resumption { next = sequence }
                await yield(.resumed(resumption))
            }
            if let event = Self.renumbering(expected: next!, playlist, read: read, since: lastLoad.duration(to: loadStarted)) {
                await yield(event)
                switch event {
                case .sequenceWentBack(_, let to), .renumbered(_, let to): next = to
                case .gap(let sequences): next = sequences.upperBound + 1
                default: break
                }
            }
            lastLoad = loadStarted
            var changed = false
            for segment in playlist.segments where segment.mediaSequence >= next! {
                if let previous = discontinuity, segment.discontinuitySequence < previous {
                    await yield(.discontinuityWentBack(from: previous, to: segment.discontinuitySequence))
                }
                discontinuity = segment.discontinuitySequence
                read.insert(segment)
                await yield(.segment(segment))
                next = segment.mediaSequence + 1
                changed = true
            }
            if playlist.hasEndList { return }
            let target = Duration.seconds(max(playlist.targetDuration, 0.5))
            try? await clock.sleep(until: loadStarted.advanced(by: changed ? target : target / 2), tolerance: nil)
            while !Task.isCancelled {
                do {
                    // Only what is new is made, once where to start is known; a sequence that
                    // went back needs the whole list to find what was not read.
                    let floor = resuming == nil ? next : nil
                    playlist = try await scanner.loadMediaPlaylist(location, targetDuration: playlist.targetDuration,
                                                                   keeping: floor.map { .from($0) } ?? .all)
                    if let floor, playlist.skippedSegments > 0, let last = playlist.lastSequence, last < floor - 1 {
                        playlist = try await scanner.loadMediaPlaylist(location, targetDuration: playlist.targetDuration)
                    }
                    failures = 0
                    break
                } catch {
                    onReloadFailure(error)
                    failures += 1
                    // Back off up to four target durations; a live window outlasts a short outage.
                    try? await clock.sleep(for: target / 2 * min(1 << min(failures, 3), 8), tolerance: nil)
                }
            }
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
        let shortest = max(playlist.segments.map(\.duration).min() ?? playlist.targetDuration, 0.1)
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
        let unlisted = Double(max(0, first - lost.lowerBound)) * playlist.targetDuration
        return .atLiveEdge(lost: lost, seconds: listed + unlisted)
    }
}

/// The last segments read, by URI and byte range: what tells a renumbered segment from a new
/// one, whatever number it carries. Bounded.
struct RecentSegments: Sendable {
    private var set: Set<String> = []
    private var order: Deque<String> = []
    private let capacity = 4_096

    func contains(_ segment: Segment) -> Bool { set.contains(Self.key(segment)) }

    mutating func insert(_ segment: Segment) {
        let key = Self.key(segment)
        guard set.insert(key).inserted else { return }
        order.append(key)
        if order.count > capacity { set.remove(order.removeFirst()) }
    }

    private static func key(_ segment: Segment) -> String { segment.byteRange.map { "\(segment.uri) \($0)" } ?? segment.uri }
}
