/// What the feeder tells its caller besides the engine calls.
/// Plays a tag source against an engine the way a player would: a frame clock at the declared
/// frame rate, `sendID3` for each tag when the playhead reaches it, `playheadPosition` once a
/// second of playback. The clock is injected: `ContinuousClock` for real time, `InstantClock`
/// for `--speed max` and for tests.
public struct Feeder<C: Clock>: Sendable where C.Duration == Duration {
    /// Waited on for each frame that brings a tag due, and for each second's playhead report.
    public var clock: C
    /// Media seconds per wall-clock second.
    public var speed: Double
    /// `--fps`, used when the stream declares no frame rate.
    public var frameRateOption: Double?
    /// Stop once this much of the stream has played: on the stream's clock, like every other time
    /// here, so a stall does not count and `--speed max` plays exactly as much.
    public var stopAfter: Duration?

    /// A feeder on `clock`, playing `speed` media seconds per clock second.
    public init(clock: C, speed: Double = 1, frameRateOption: Double? = nil, stopAfter: Duration? = nil) {
        self.clock = clock
        self.speed = speed
        self.frameRateOption = frameRateOption
        self.stopAfter = stopAfter
    }

    private enum Input: Sendable {
        case source(MediaEvent)
        case sourceEnded
        case wake(Int)
    }

    /// Runs until the source ends and every tag is delivered, `stopAfter` has played, or the task
    /// is cancelled. Returns the number of `sendID3` calls made.
    ///
    /// Tags of a segment are buffered when the segment has been read (its `.segment` event), as
    /// a player buffers whole segments; a tag from an input without segments is buffered at once.
    /// `playback` hears what the clock does (its rate, each delivery's lateness, stalls);
    /// `problem` gets the source's `.malformed`, `.failure` and `.warning` events as they are.
    @discardableResult
    public func run<S: AsyncSequence & Sendable>(_ source: S, engine: any MeteringEngine,
                                                 playback: @Sendable (PlaybackEvent) async -> Void = { _ in },
                                                 problem: @Sendable (MediaEvent) async -> Void = { _ in }) async -> Int
    where S.Element == MediaEvent, S.Failure == Never {
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        let pump = Task {
            for await event in source { continuation.yield(.source(event)) }
            continuation.yield(.sourceEnded)
        }
        var timer: Task<Void, Never>?
        defer {
            pump.cancel()
            timer?.cancel()
        }
        let start = clock.now
        func elapsed() -> Double { start.duration(to: clock.now).seconds }

        var playout: Playout?
        var sourceEnded = false
        var nextPlayheadReport = 1.0
        var generation = 0
        var calls = 0
        /// Tags of the segment being read.
        var segmentTags: [TimedTag] = []
        func makePlayout(_ info: SourceInfo?) async -> Playout {
            let choice = FrameRateChoice(info: info, option: frameRateOption)
            await playback(.frameRate(choice))
            return Playout(frameRate: choice.framesPerSecond, speed: speed)
        }
        func buffer(_ chunk: MediaChunk) async {
            if playout == nil { playout = await makePlayout(nil) }
            if let stalled = playout?.append(chunk, at: elapsed()), stalled > 0 { await playback(.stalled(seconds: stalled)) }
        }

        for await input in inputs {
            switch input {
            case .source(.opened(let info)):
                if playout == nil { playout = await makePlayout(info) }
            case .source(.tag(let tag)):
                if tag.origin.segment == nil {
                    await buffer(MediaChunk(segment: nil, duration: nil, tags: [tag]))
                } else {
                    segmentTags.append(tag)
                }
            case .source(.segment(let segment)):
                await buffer(MediaChunk(segment: segment, duration: segment.duration, tags: segmentTags))
                segmentTags = []
            case .source(let other):
                await problem(other)
            case .sourceEnded:
                sourceEnded = true
                if let first = segmentTags.first {
                    await buffer(MediaChunk(segment: first.origin.segment, duration: nil, tags: segmentTags))
                    segmentTags = []
                }
            case .wake(let wake):
                guard wake == generation else { continue }
            }
            let now = elapsed()
            guard var current = playout else {
                if sourceEnded { break } else { continue }
            }
            let stopPosition = stopAfter.flatMap { limit in current.startPosition.map { $0 + limit.seconds } }
            for due in current.takeDue(at: now) where stopPosition.map({ due.position <= $0 + 1e-9 }) ?? true {
                let lateness = current.time(reaching: due.position).map { max(elapsed() - $0, 0) } ?? 0
                for nielsen in due.tag.nielsenTags {
                    await engine.sendID3(nielsen.payload, context: TagContext(due.tag))
                    await playback(.delivered(lateness: lateness))
                    calls += 1
                }
            }
            let stalled = current.isStalled(at: now)
            if now >= nextPlayheadReport {
                if !stalled, let playhead = current.playhead(at: now) { await engine.playheadPosition(Int64(playhead)) }
                nextPlayheadReport = now.rounded(.down) + 1
            }
            playout = current
            if let stopPosition, let playhead = current.playhead(at: now), playhead >= stopPosition - 1e-9 { break }
            if sourceEnded, current.pending.isEmpty || current.nextDueTime() == nil { break }
            let stopTime = stopPosition.flatMap { current.time(reaching: $0) }
            let wake = [current.nextDueTime(), stalled ? nil : nextPlayheadReport, stopTime].compactMap { $0 }.min()
            generation += 1
            timer?.cancel()
            if let wake {
                let deadline = start.advanced(by: .seconds(wake)), clock = clock, generation = generation
                timer = Task {
                    try? await clock.sleep(until: deadline, tolerance: nil)
                    if !Task.isCancelled { continuation.yield(.wake(generation)) }
                }
            }
        }
        return calls
    }
}

extension Duration {
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
