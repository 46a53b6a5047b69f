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
    public var scanner: TagScanner
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
    /// Where the frame clock and the reloads sleep: `nil`, each on its own timer; `serve`'s
    /// channels share `SharedTimer.shared`.
    package var timer: SharedTimer?

    public init(input: String, session: MeteringSession, scanner: TagScanner = TagScanner(), liveStart: Int = 3,
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

    /// The metering's events: the stream's events as the feeder takes them in (`.read`) and what
    /// its frame clock does, the engine called as they are pulled, until the stream ends,
    /// `stopAfter` has played, or the pulling task is cancelled. A resumed run says where it
    /// picked up with a `.read(.resumed)` event. The failure that ended the stream's reading is
    /// thrown, after the tags read before it are delivered and the session ended.
    public func events(engine: any MeteringEngine) -> some AsyncSequence<MeteringEvent, InputFailure> & Sendable {
        let resuming = resume.map { ResumingEngine(engine, resumingAfter: $0) }
        let engine = resuming ?? engine
        let source = TagSource(input: input, scanner: scanner, liveStart: liveStart, resumeAt: resume?.mediaSequence,
                               clock: MeterClock(timer: timer))
        // Both are made (values, nothing runs until pulled); the pace picks one.
        let speed = if case .realTime(let speed) = pace { speed } else { 1.0 }
        let waiting = Feeder(clock: MeterClock(timer: timer), speed: speed, frameRateOption: frameRateOption, stopAfter: stopAfter)
        let instant = Feeder(clock: InstantClock(), frameRateOption: frameRateOption, stopAfter: stopAfter)
        let realTime = Self.resumable(session.events(source, feeder: waiting, engine: engine), resuming)
        let noWaiting = Self.resumable(session.events(source, feeder: instant, engine: engine), resuming)
        return EitherSequence(choice: pace == .noWaiting ? .second(noWaiting) : .first(realTime))
    }

    /// A resumed run's checkpoint forgotten when the stream's sequence numbers went back: as
    /// the event is pulled, before any tag after it is delivered.
    private static func resumable<Played: AsyncSequence & Sendable>(_ played: Played, _ resuming: ResumingEngine?)
        -> AsyncMapSequence<Played, MeteringEvent> where Played.Element == MeteringEvent {
        played.map { @Sendable event in
            if case .read(.resumed(.sequenceWentBack)) = event { resuming?.forgetCheckpoint() }
            return event
        }
    }
}
