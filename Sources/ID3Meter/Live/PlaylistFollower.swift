/// What following a playlist yields, in media-sequence order.
public enum PlaylistEvent: Sendable, Equatable {
    /// A segment not seen before.
    case segment(Segment)
    /// Segments that left the sliding window before they could be fetched, by media sequence.
    case gap(ClosedRange<Int>)
    /// Where following from a checkpoint (`resumeAt`) started, before the first segment.
    case resumed(Resumption)
}

/// Follows a media playlist the way RFC 8216 §6.3.4 asks of a client: reload no sooner than
/// the target duration after the last load began, or half of it after a reload that brought
/// nothing new; track the sliding window by media sequence so that no segment is yielded twice
/// and a skipped one is reported; stop at EXT-X-ENDLIST.
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
        while !Task.isCancelled {
            let loadStarted = clock.now
            if next == nil {
                let join = playlist.hasEndList ? playlist.mediaSequence
                    : playlist.mediaSequence + max(0, playlist.segments.count - max(liveStart, 1))
                next = join
            }
            // Decided on the first playlist that lists a segment to tell by.
            if let sequence = resuming, let resumption = Self.resumption(at: sequence, joining: next!, playlist) {
                resuming = nil
                if case .atSegment(let sequence) = resumption { next = sequence }
                await yield(.resumed(resumption))
            }
            var changed = false
            if let expected = next, let firstSequence = playlist.segments.first?.mediaSequence, firstSequence > expected {
                await yield(.gap(expected...(firstSequence - 1)))
                next = firstSequence
            }
            for segment in playlist.segments where segment.mediaSequence >= next! {
                await yield(.segment(segment))
                next = segment.mediaSequence + 1
                changed = true
            }
            if playlist.hasEndList { return }
            let target = Duration.seconds(max(playlist.targetDuration, 0.5))
            try? await clock.sleep(until: loadStarted.advanced(by: changed ? target : target / 2), tolerance: nil)
            while !Task.isCancelled {
                do {
                    playlist = try await scanner.loadMediaPlaylist(location, targetDuration: playlist.targetDuration)
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
