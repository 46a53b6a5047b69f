/// One stream metered as a player plays it: its source followed, a frame clock at its declared
/// rate, an engine session from `play` to `end`. `id3-meter URL` runs one; `serve` runs one per
/// channel, so both have the same pacing, dedupe, reload and retry rules.
public struct StreamMeter: Sendable {
    /// How fast the frame clock runs.
    public enum Pace: Sendable, Equatable {
        /// `speed` media seconds per second of real time.
        case realTime(speed: Double)
        /// The same schedule without waiting (`--speed max`).
        case noWaiting
    }

    public var input: String
    public var session: MeteringSession
    /// Chooses the variant and fetches, with its limits, retries and headers.
    public var scanner: Scanner
    /// Segments back from a live playlist's end to join at.
    public var liveStart: Int
    /// The frame rate when the stream declares none (`--fps`).
    public var frameRateOption: Double?
    public var pace: Pace
    /// Stop once this much of the stream has played (`--duration`).
    public var stopAfter: Duration?
    /// The last tag a previous run delivered (`--state`): the run starts at its segment when
    /// the playlist still lists it, and delivers nothing up to it again.
    public var resume: ResumePoint?

    public init(input: String, session: MeteringSession, scanner: Scanner = Scanner(), liveStart: Int = 3,
                frameRateOption: Double? = nil, pace: Pace = .realTime(speed: 1), stopAfter: Duration? = nil,
                resume: ResumePoint? = nil) {
        self.input = input
        self.session = session
        self.scanner = scanner
        self.liveStart = liveStart
        self.frameRateOption = frameRateOption
        self.pace = pace
        self.stopAfter = stopAfter
        self.resume = resume
    }

    /// Meters until the stream ends, `stopAfter` has played, or the task is cancelled; returns
    /// the number of `sendID3` calls. `playback` and `problem` are the feeder's; `watch` sees
    /// every event as the source yields it, before the frame clock plays it. A resumed run says
    /// where it picked up with a `.resumed` event, to `problem` and `watch`.
    @discardableResult
    public func run(engine: any MeteringEngine, playback: @escaping @Sendable (PlaybackEvent) async -> Void = { _ in },
                    problem: @escaping @Sendable (MediaEvent) async -> Void = { _ in },
                    watch: @escaping @Sendable (MediaEvent) async -> Void = { _ in }) async -> Int {
        let resuming = resume.map { ResumingEngine(engine, resumingAfter: $0) }
        let engine = resuming ?? engine
        // On the feeder's task, as its engine calls are, and before any tag after the event.
        let problem = { @Sendable (event: MediaEvent) in
            if case .resumed(.sequenceWentBack) = event { resuming?.forgetCheckpoint() }
            await problem(event)
        }
        let source = TagSource(input: input, scanner: scanner, liveStart: liveStart, resumeAt: resume?.mediaSequence,
                               clock: ContinuousClock())
            .map { @Sendable event in
                await watch(event)
                return event
            }
        switch pace {
        case .realTime(let speed):
            let feeder = Feeder(clock: ContinuousClock(), speed: speed, frameRateOption: frameRateOption, stopAfter: stopAfter)
            return await session.run(source, feeder: feeder, engine: engine, playback: playback, problem: problem)
        case .noWaiting:
            let feeder = Feeder(clock: InstantClock(), frameRateOption: frameRateOption, stopAfter: stopAfter)
            return await session.run(source, feeder: feeder, engine: engine, playback: playback, problem: problem)
        }
    }
}
