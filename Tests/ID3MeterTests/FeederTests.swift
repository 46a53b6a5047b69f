import Synchronization
import Testing
@testable import ID3Meter
@testable import ID3MeterCore

/// An engine that notes the virtual time of each call: a `Sendable` class with synchronous
/// methods conforms as an actor does.
final class ClockedEngine: MeteringEngine {
    let clock: InstantClock
    private let calls = Mutex<(sends: [(payload: String, at: Double)], playheads: [(position: Int64, at: Double)])>(([], []))
    var sends: [(payload: String, at: Double)] { calls.withLock { $0.sends } }
    var playheads: [(position: Int64, at: Double)] { calls.withLock { $0.playheads } }

    init(clock: InstantClock) { self.clock = clock }

    private var now: Double { InstantClock.Instant(offset: .zero).duration(to: clock.now).seconds }

    func play(channelName: String) {}
    func loadMetadata(_ json: String) {}
    func sendID3(_ payload: String, context: TagContext) {
        let at = now
        calls.withLock { $0.sends.append((payload, at)) }
    }
    func playheadPosition(_ position: Int64) {
        let at = now
        calls.withLock { $0.playheads.append((position, at)) }
    }
    func stop() {}
    func end() {}
}

@Suite("Feeder on an injected clock", .timeLimit(.minutes(3)))
struct FeederTests {
    static func source(_ events: [MediaEvent]) -> AsyncStream<MediaEvent> {
        AsyncStream { continuation in
            events.forEach { continuation.yield($0) }
            continuation.finish()
        }
    }

    /// A segment as a source yields it: its tags, then its end.
    static func events(_ chunk: MediaChunk) -> [MediaEvent] {
        chunk.tags.map(MediaEvent.tag) + [.segment(chunk.segment!)]
    }

    static let info = SourceInfo(variantFrameRate: 25, videoFrameRate: 30, isLive: false)

    @Test func deliversEachTagOnItsFrameAndReportsThePlayheadEverySecond() async {
        let clock = InstantClock()
        let engine = ClockedEngine(clock: clock)
        let chunk = PlayoutTests.segment(sequence: 7, startPTS: 1_000_000, tagOffsets: [0.5, 1.5, 2.5, 3.5, 4.5, 5.5])
        var rates: [FrameRateChoice] = []
        var calls = 0
        for await event in Feeder(clock: clock).events(Self.source([.opened(Self.info)] + Self.events(chunk)), engine: engine) {
            if case .frameRate(let choice) = event { rates.append(choice) }
            if case .delivered = event { calls += 1 }
        }
        #expect(calls == 6)
        // The variant's FRAME-RATE (25) wins over the video's probed 30.
        #expect(rates.map(\.framesPerSecond) == [25])
        #expect(rates.map(\.origin) == [.variant])
        #expect(engine.sends.map(\.payload) == (0..<6).map { "www.nielsen.com/7/\($0)" })
        for (index, send) in engine.sends.enumerated() {
            let due = 0.5 + Double(index)
            #expect(send.at >= due - 1e-9 && send.at < due + 1.0 / 25, "tag \(index) at \(send.at)")
        }
        #expect(engine.playheads.map(\.position) == [1, 2, 3, 4, 5])
        #expect(engine.playheads.map(\.at).matches([1.0, 2, 3, 4, 5], within: 1e-9))
    }

    @Test func stopsAfterTheGivenTime() async {
        let clock = InstantClock()
        let engine = ClockedEngine(clock: clock)
        let chunk = PlayoutTests.segment(sequence: 0, startPTS: 0, tagOffsets: [1, 2, 3, 4])
        await Feeder(clock: clock, stopAfter: .seconds(2.5)).events(Self.source(Self.events(chunk)), engine: engine).deliveries()
        #expect(engine.sends.map(\.payload) == ["www.nielsen.com/0/0", "www.nielsen.com/0/1"])
    }

    /// At `--speed max` the clock jumps while the source is still fetching; the stop is on the
    /// stream's clock, so a duration longer than the stream delivers every tag.
    @Test func theStopIsOnTheStreamsClockSoAStallDoesNotCount() async {
        let clock = InstantClock()
        let engine = ClockedEngine(clock: clock)
        let first = PlayoutTests.segment(sequence: 0, startPTS: 0, tagOffsets: [1, 3, 5])
        let second = PlayoutTests.segment(sequence: 1, startPTS: 6 * 90_000, tagOffsets: [1, 3, 5])
        let source = AsyncStream<MediaEvent> { continuation in
            Task {
                Self.events(first).forEach { continuation.yield($0) }
                try? await Task.sleep(for: .milliseconds(100))   // a segment still downloading
                Self.events(second).forEach { continuation.yield($0) }
                continuation.finish()
            }
        }
        await Feeder(clock: clock, stopAfter: .seconds(600)).events(source, engine: engine).deliveries()
        #expect(engine.sends.map(\.payload) == (0..<2).flatMap { segment in (0..<3).map { "www.nielsen.com/\(segment)/\($0)" } })
    }

    @Test func manySegmentsAtMaximumSpeedArriveOnceAndInOrder() async {
        let clock = InstantClock()
        let engine = ClockedEngine(clock: clock)
        let chunks = (0..<20).map { PlayoutTests.segment(sequence: $0, startPTS: 90_000 * 6 * Int64($0), tagOffsets: [1, 3, 5]) }
        var problems: [String] = []
        let events = chunks.flatMap(Self.events) + [.failure(InputFailure(source: "s", .empty))]
        for await event in Feeder(clock: clock).events(Self.source(events), engine: engine) {
            if case .read(.failure(let failure)) = event { problems.append(failure.description) }
        }
        #expect(engine.sends.map(\.payload) == (0..<20).flatMap { segment in (0..<3).map { "www.nielsen.com/\(segment)/\($0)" } })
        #expect(problems == ["s: cannot read: it is empty"], "passed on as it came")
    }

    /// A tag whose segment never ends (the last segment failed after completing it) is still
    /// played, at the source's end; a tag from an input without segments is buffered as read.
    @Test func noTagIsLeftInTheBuffer() async {
        let clock = InstantClock()
        let engine = ClockedEngine(clock: clock)
        let segment = PlayoutTests.segment(sequence: 0, startPTS: 0, tagOffsets: [1, 2])
        let unended = PlayoutTests.segment(sequence: 1, startPTS: 6 * 90_000, tagOffsets: [1])
        let calls = await Feeder(clock: clock).events(Self.source(Self.events(segment) + [.tag(unended.tags[0])]), engine: engine).deliveries().calls
        #expect(calls == 3)
        #expect(engine.sends.map(\.payload) == ["www.nielsen.com/0/0", "www.nielsen.com/0/1", "www.nielsen.com/1/0"])
        #expect(engine.sends.map(\.at).matches([1.0, 2.0, 7.0], within: 1.0 / 25 + 1e-9), "\(engine.sends)")

        let lone = segment.tags.map { TimedTag(tag: $0.tag, pts: $0.pts, origin: TagOrigin(source: "plain.ts")) }
        let loneEngine = ClockedEngine(clock: InstantClock())
        await Feeder(clock: loneEngine.clock).events(Self.source(lone.map(MediaEvent.tag)), engine: loneEngine).deliveries()
        #expect(loneEngine.sends.map(\.payload) == ["www.nielsen.com/0/0", "www.nielsen.com/0/1"])
        #expect(loneEngine.sends.map(\.at).matches([0.0, 1.0], within: 1.0 / 25 + 1e-9), "\(loneEngine.sends)")
    }

    /// Nothing runs ahead of the consumer: when an event comes out, the engine has had exactly
    /// the deliveries that came out before it, so what the consumer does with a `.read` event
    /// (a record, a log line) comes before any tag after it.
    @Test func theEngineIsCalledAsTheEventsArePulled() async {
        let clock = InstantClock()
        let engine = ClockedEngine(clock: clock)
        let first = PlayoutTests.segment(sequence: 0, startPTS: 0, tagOffsets: [0, 0.5, 1.5])
        let second = PlayoutTests.segment(sequence: 1, startPTS: 6 * 90_000, tagOffsets: [0, 1])
        let warning = InputFailure(source: "s", .empty)
        var delivered = 0
        var sendsAtEachEvent: [Int] = []
        var sendsAtWarning: Int?
        let source = Self.source(Self.events(first) + [.warning(warning)] + Self.events(second))
        for await event in Feeder(clock: clock).events(source, engine: engine) {
            if case .delivered = event { delivered += 1 }
            if case .read(.warning) = event { sendsAtWarning = engine.sends.count }
            sendsAtEachEvent.append(engine.sends.count - delivered)
        }
        #expect(delivered == 5)
        #expect(engine.sends.count == 5)
        #expect(!sendsAtEachEvent.isEmpty && sendsAtEachEvent.allSatisfy { $0 == 0 }, "\(sendsAtEachEvent)")
        // The tag at 0 was due as soon as its segment was buffered; the rest of the first
        // segment's tags had not been reached when the warning was read.
        #expect(sendsAtWarning == 1)
    }

    /// One timer serves the whole run; while it sleeps until the next second's playhead report,
    /// a tag read now and due sooner (a stream's tags are buffered as they come) is still
    /// delivered on its frame: the timer asleep until later is replaced.
    @Test(.timeLimit(.minutes(1))) func aTagDueBeforeTheTimersWakeIsDeliveredOnItsFrame() async {
        let clock = ManualClock()
        let engine = CallLog()
        let tags = PlayoutTests.segment(sequence: 0, startPTS: 0, tagOffsets: [0, 2, 0.6]).tags
            .map { TimedTag(tag: $0.tag, pts: $0.pts, origin: TagOrigin(source: "udp://feed")) }
        let (source, feed) = AsyncStream.makeStream(of: MediaEvent.self)
        [.opened(Self.info), .tag(tags[0]), .tag(tags[1])].forEach { feed.yield($0) }
        let consumer = Task {
            var lateness: [Double] = []
            for await event in Feeder(clock: clock).events(source, engine: engine) {
                if case .delivered(let late) = event { lateness.append(late.seconds) }
            }
            return lateness
        }
        await clock.sleeper(until: ManualClock.at(1))   // the playhead report; the tag at 2 s waits
        clock.advance(to: ManualClock.at(0.5))
        feed.yield(.tag(tags[2]))                        // due at 0.6 s
        await clock.sleeper(until: ManualClock.at(0.6))
        clock.advance(to: ManualClock.at(0.6))
        await clock.sleeper(until: ManualClock.at(1))   // delivered, and the report is next
        feed.finish()
        clock.advance(to: ManualClock.at(10))
        let lateness = await consumer.value
        #expect(await engine.calls.filter { $0.hasPrefix("sendID3") } == ["sendID3 www.nielsen.com/0/0", "sendID3 www.nielsen.com/0/2",
                                                                         "sendID3 www.nielsen.com/0/1"])
        #expect(lateness.count == 3 && lateness[0] < 1e-6 && lateness[1] < 1e-6, "\(lateness)")
    }

    /// A session's engine hears `end` when the task pulling its events is cancelled, as a
    /// player's session ends when it is closed mid-stream.
    @Test func aCancelledSessionStillEnds() async throws {
        let engine = CallLog()
        let (source, feed) = AsyncStream.makeStream(of: MediaEvent.self)
        let chunk = PlayoutTests.segment(sequence: 0, startPTS: 0, tagOffsets: [0])
        Self.events(chunk).forEach { feed.yield($0) }
        let (reads, read) = AsyncStream.makeStream(of: Void.self)
        let consumer = Task {
            for await event in MeteringSession(channelName: "c").events(source, feeder: Feeder(clock: ContinuousClock()), engine: engine) {
                if case .read(.segment) = event { read.yield() }
            }
        }
        for await _ in reads { break }
        consumer.cancel()
        await consumer.value
        feed.finish()
        #expect(await engine.calls == ["play c", "loadMetadata", "sendID3 www.nielsen.com/0/0", "end"])
    }

    @Test func frameRateChoiceOrder() {
        #expect(FrameRateChoice(info: SourceInfo(variantFrameRate: 50, videoFrameRate: 25, isLive: true), option: 24).origin == .variant)
        #expect(FrameRateChoice(info: SourceInfo(variantFrameRate: nil, videoFrameRate: 25, isLive: true), option: 24).framesPerSecond == 25)
        #expect(FrameRateChoice(info: SourceInfo(variantFrameRate: nil, videoFrameRate: nil, isLive: true), option: 24).origin == .option)
        let fallback = FrameRateChoice(info: nil, option: nil)
        #expect(fallback.origin == .fallback)
        #expect(fallback.framesPerSecond == 30_000.0 / 1_001)
    }
}

/// The engine calls in order, as names.
actor CallLog: MeteringEngine {
    private(set) var calls: [String] = []
    func play(channelName: String) { calls.append("play \(channelName)") }
    func loadMetadata(_ json: String) { calls.append("loadMetadata") }
    func sendID3(_ payload: String, context: TagContext) { calls.append("sendID3 \(payload)") }
    func playheadPosition(_ position: Int64) {}
    func stop() { calls.append("stop") }
    func end() { calls.append("end") }
}
