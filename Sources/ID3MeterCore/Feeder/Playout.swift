/// The frame clock, as a pure model of time: a playhead that advances one frame per frame
/// duration of wall-clock time (scaled by `speed`) through the buffered media, freezes when the
/// buffer runs dry (a live stall) and resumes where it froze when media arrives, with no burst.
/// A tag is due at the first frame whose playhead reaches its position.
///
/// Times are seconds: `now` on the wall clock since the feeder started, positions on the
/// `Timeline`. The model never reads a clock, so tests drive it with any times they like.
struct Playout {
    struct Pending {
        var tag: TimedTag
        var position: Double
    }

    /// Media seconds per frame.
    let frameDuration: Double
    let speed: Double
    private var timeline = Timeline()
    private(set) var pending: [Pending] = []
    private var anchor: (wall: Double, position: Double)?
    /// Where playback started on the timeline.
    private(set) var startPosition: Double?
    private static let epsilon = 1e-9

    init(frameRate: Double, speed: Double = 1) {
        frameDuration = 1 / frameRate
        self.speed = speed
    }

    var bufferedEnd: Double { timeline.end }

    /// Buffers `chunk`; returns how long playback had been stalled, waiting for it (0 when not).
    @discardableResult
    mutating func append(_ chunk: MediaChunk, at now: Double) -> Double {
        var stalled = 0.0
        let dry = anchor.map { rawPlayhead(at: now, $0) > timeline.end } ?? false
        let bufferedEnd = timeline.end
        if let anchor, dry {
            // Stalled: playback resumes from where it froze, now.
            stalled = now - (anchor.wall + (timeline.end - anchor.position) / speed)
            self.anchor = (now, timeline.end)
        }
        let positions = timeline.place(chunk)
        // Media that starts past where playback froze leaves a hole (segments given up on, or
        // gone from the live window): playback resumes at the media, as hls.js's gap controller
        // skips a buffer hole playback is stalled at, not after the hole's length of nothing.
        if dry, timeline.lastStart > bufferedEnd + Self.epsilon { anchor = (now, timeline.lastStart) }
        if anchor == nil {
            // Playback starts at the start of the first buffered media (timeline position 0),
            // or at its first tag if that comes earlier.
            anchor = (now, min(0, positions.min() ?? 0))
            startPosition = anchor?.position
        }
        for (tag, position) in zip(chunk.tags, positions) {
            // INFO tags may arrive out of order; keep the queue in position order, arrival order for ties.
            let index = pending.lastIndex { $0.position <= position }.map { $0 + 1 } ?? 0
            pending.insert(Pending(tag: tag, position: position), at: index)
        }
        return stalled
    }

    /// The frame-quantised playhead, held at the buffered end while stalled.
    func playhead(at now: Double) -> Double? {
        guard let anchor else { return nil }
        let frames = ((now - anchor.wall) * speed / frameDuration + Self.epsilon).rounded(.down)
        return min(anchor.position + max(frames, 0) * frameDuration, timeline.end)
    }

    func isStalled(at now: Double) -> Bool {
        guard let anchor else { return true }
        return rawPlayhead(at: now, anchor) >= timeline.end
    }

    /// Removes and returns the tags the playhead has reached, in order.
    mutating func takeDue(at now: Double) -> [Pending] {
        guard let playhead = playhead(at: now) else { return [] }
        let count = pending.prefix { $0.position <= playhead + Self.epsilon }.count
        defer { pending.removeFirst(count) }
        return Array(pending.prefix(count))
    }

    /// When the next pending tag falls due, if the buffer already holds it.
    func nextDueTime() -> Double? {
        pending.first.flatMap { time(reaching: $0.position) }
    }

    /// The wall time of the first frame at or past `position`, if the buffer already reaches it.
    func time(reaching position: Double) -> Double? {
        guard let anchor, position <= timeline.end + Self.epsilon else { return nil }
        let frames = max(((position - anchor.position) / frameDuration - Self.epsilon).rounded(.up), 0)
        return anchor.wall + frames * frameDuration / speed
    }

    private func rawPlayhead(at now: Double, _ anchor: (wall: Double, position: Double)) -> Double {
        anchor.position + (now - anchor.wall) * speed
    }
}
