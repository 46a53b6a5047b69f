/// Plays a tag source against an engine the way a player would: a frame clock at the declared
/// frame rate, `sendID3` for each tag when the playhead reaches it, `playheadPosition` once a
/// second of playback. The clock is injected: `ContinuousClock` for real time; `StreamMeter`'s
/// `.noWaiting` pace (`--speed max`) and the tests run it on one that never waits.
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

    /// The session's events as the feeder plays `source` against `engine`, the engine called as
    /// the sequence is pulled: nothing is read before the first pull, and a source event is
    /// handed out before any tag after it is delivered.
    ///
    /// Tags of a segment are buffered when the segment has been read (its `.segment` event), as
    /// a player buffers whole segments; a tag from an input without segments is buffered at once.
    /// The sequence ends when the source has ended and every tag is delivered, `stopAfter` has
    /// played, or the pulling task is cancelled; a consumer that stops pulling stops the feeder,
    /// and the reading of the source, where they are.
    /// The failure that ended the source, if one did, is thrown once every tag buffered before
    /// it has been delivered, as a player plays out its buffer.
    ///
    /// `MeteringSession.events` is the public way in: a feeder alone calls neither `play` nor `end`.
    package func events<S: AsyncSequence & Sendable>(_ source: S, engine: any MeteringEngine)
        -> some AsyncSequence<MeteringEvent, S.Failure> & Sendable where S.Element == MediaEvent {
        FeederEvents(feeder: self, source: source, engine: engine)
    }
}

private struct FeederEvents<S: AsyncSequence & Sendable, C: Clock>: AsyncSequence, Sendable
where S.Element == MediaEvent, C.Duration == Duration {
    typealias Failure = S.Failure

    let feeder: Feeder<C>
    let source: S
    let engine: any MeteringEngine

    func makeAsyncIterator() -> Iterator { Iterator(self) }

    struct Iterator: AsyncIteratorProtocol {
        private enum Input: Sendable {
            /// In a box of its own: held inline in this enum, generic over the failure, an event
            /// whose tag is one reference (`TimedTag`) was read back from the wrong bytes by
            /// serve's optimised build, and it crashed within seconds (Swift 6.3; docs/NOTES.md).
            indirect case source(MediaEvent)
            /// The source ended, by the failure it threw or by itself.
            case sourceEnded(S.Failure?)
            case wake(Int)
        }

        /// The source's pump and the wake-up set, cancelled however the iteration ends.
        private final class Tasks {
            var pump: Task<Void, Never>?
            /// Cancels the wake-up set, if one is.
            var cancelAlarm: (@Sendable () -> Void)?

            func cancel() {
                pump?.cancel()
                cancelAlarm?()
                cancelAlarm = nil
            }

            deinit { cancel() }
        }

        private let run: FeederEvents
        private var inputs: AsyncStream<Input>.Iterator
        private let continuation: AsyncStream<Input>.Continuation
        private let tasks = Tasks()
        private var start: C.Instant?
        private var playout: Playout?
        private var sourceEnded = false
        /// What the source threw, thrown once the rest is played.
        private var sourceFailure: S.Failure?
        private var nextPlayheadReport = 1.0
        /// The clock, when it can ring at a deadline itself (`AlarmClock`).
        private let alarmClock: (any AlarmClock<C.Instant>)?
        /// The wake-up set and not yet come, by generation: a wake of another was cancelled.
        private var armed: (generation: Int, deadline: C.Instant)?
        private var generation = 0
        /// Tags of the segment being read.
        private var segmentTags: [TimedTag] = []
        /// Events made and not yet pulled.
        private var ready: [MeteringEvent] = []
        /// An input was taken in: the clock plays before the next one is.
        private var mustPlay = false
        private var finished = false

        init(_ run: FeederEvents) {
            self.run = run
            alarmClock = run.feeder.clock as? any AlarmClock<C.Instant>
            let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
            self.inputs = inputs.makeAsyncIterator()
            self.continuation = continuation
        }

        mutating func next() async throws(S.Failure) -> MeteringEvent? {
            try await next(isolation: nil)
        }

        mutating func next(isolation actor: isolated (any Actor)?) async throws(S.Failure) -> MeteringEvent? {
            if start == nil { begin() }
            while ready.isEmpty {
                guard !finished else {
                    if let failure = sourceFailure.take() { throw failure }
                    return nil
                }
                if mustPlay {
                    mustPlay = false
                    await play(isolation: actor)
                } else {
                    await take(isolation: actor)
                }
            }
            return ready.removeFirst()
        }

        private mutating func begin() {
            start = run.feeder.clock.now
            let (source, continuation) = (run.source, continuation)
            tasks.pump = Task {
                do throws(S.Failure) {
                    for try await event in source { continuation.yield(.source(event)) }
                    continuation.yield(.sourceEnded(nil))
                } catch {
                    continuation.yield(.sourceEnded(error))
                }
            }
        }

        private mutating func finish() {
            finished = true
            tasks.cancel()
        }

        private func elapsed() -> Double { start.map { $0.duration(to: run.feeder.clock.now).seconds } ?? 0 }

        private mutating func makePlayout(_ info: SourceInfo?) -> Playout {
            let choice = FrameRateChoice(info: info, option: run.feeder.frameRateOption)
            ready.append(.frameRate(choice))
            return Playout(frameRate: choice.framesPerSecond, speed: run.feeder.speed)
        }

        private mutating func buffer(_ chunk: MediaChunk) {
            if playout == nil { playout = makePlayout(nil) }
            let now = elapsed()
            if let stalled = playout?.append(chunk, at: now), stalled > 0 { ready.append(.stalled(for: .seconds(stalled))) }
        }

        /// The next input taken in: a source event, the source's end, or the clock's wake-up.
        private mutating func take(isolation actor: isolated (any Actor)?) async {
            guard let input = await inputs.next(isolation: actor) else { return finish() }
            switch input {
            case .source(let event):
                ready.append(.read(event))
                switch event {
                case .opened(let info):
                    if playout == nil { playout = makePlayout(info) }
                case .tag(let tag):
                    if tag.origin.segment == nil {
                        buffer(MediaChunk(segment: nil, duration: nil, tags: [tag]))
                    } else {
                        segmentTags.append(tag)
                    }
                case .segment(let segment):
                    buffer(MediaChunk(segment: segment, duration: segment.duration, tags: segmentTags))
                    segmentTags = []
                case .mediaTime, .malformed, .failure, .warning, .resumed:
                    break
                }
            case .sourceEnded(let failure):
                sourceEnded = true
                sourceFailure = failure
                if let first = segmentTags.first {
                    buffer(MediaChunk(segment: first.origin.segment, duration: nil, tags: segmentTags))
                    segmentTags = []
                }
            case .wake(let wake):
                guard wake == armed?.generation else { return }
                armed = nil
            }
            mustPlay = true
        }

        /// The tags now due delivered, the playhead reported once a second, the next wake-up set.
        private mutating func play(isolation actor: isolated (any Actor)?) async {
            let feeder = run.feeder
            let now = elapsed()
            guard var current = playout else {
                if sourceEnded { finish() }
                return
            }
            let stopPosition = feeder.stopAfter.flatMap { limit in current.startPosition.map { $0 + limit.seconds } }
            for due in current.takeDue(at: now) where stopPosition.map({ due.position <= $0 + 1e-9 }) ?? true {
                // The clock read outside the closure: calling a method of `self` in it copied the
                // whole iterator (its buffers and tasks) at every tag.
                let reached = elapsed()
                let lateness = current.time(reaching: due.position).map { Swift.max(reached - $0, 0) } ?? 0
                for nielsen in due.tag.nielsenTags {
                    await run.engine.sendID3(nielsen.payload, context: TagContext(due.tag))
                    ready.append(.delivered(lateness: .seconds(lateness)))
                }
            }
            let stalled = current.isStalled(at: now)
            if now >= nextPlayheadReport {
                if !stalled, let playhead = current.playhead(at: now) { await run.engine.playheadPosition(Int64(playhead)) }
                nextPlayheadReport = now.rounded(.down) + 1
            }
            playout = current
            if let stopPosition, let playhead = current.playhead(at: now), playhead >= stopPosition - 1e-9 { return finish() }
            if sourceEnded, current.pending.isEmpty || current.nextDueTime() == nil { return finish() }
            let stopTime = stopPosition.flatMap { current.time(reaching: $0) }
            let wake = [current.nextDueTime(), stalled ? nil : nextPlayheadReport, stopTime].compactMap { $0 }.min()
            wakeUp(at: wake.flatMap { wake in start.map { $0.advanced(by: .seconds(wake)) } })
        }

        /// Has the feeder woken at `deadline` (not at all for `nil`): the wake-up set before is
        /// kept when it is for the same instant, else cancelled. A wake-up is the clock's alarm
        /// when it has one, else a task asleep until the deadline.
        private mutating func wakeUp(at deadline: C.Instant?) {
            guard armed?.deadline != deadline else { return }
            tasks.cancelAlarm?()
            tasks.cancelAlarm = nil
            armed = nil
            guard let deadline else { return }
            generation += 1
            let (wake, continuation) = (generation, continuation)
            armed = (wake, deadline)
            let ring: @Sendable () -> Void = { continuation.yield(.wake(wake)) }
            if let cancel = alarmClock?.alarm(at: deadline, ring: ring) {
                tasks.cancelAlarm = cancel
            } else {
                let clock = run.feeder.clock
                let sleeper = Task {
                    try? await clock.sleep(until: deadline, tolerance: nil)
                    if !Task.isCancelled { ring() }
                }
                tasks.cancelAlarm = { sleeper.cancel() }
            }
        }
    }
}

extension Duration {
    /// The package's own: a public extension on a standard-library type could collide with a
    /// client's or another library's.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
