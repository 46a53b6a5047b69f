/// What a metering session tells its caller besides the engine calls: each event of its source
/// as the feeder takes it in, and what the frame clock did.
public enum MeteringEvent: Sendable {
    /// An event of the source as the feeder takes it in, before the frame clock plays any tag
    /// that follows it: a tag read (not yet due), a segment buffered, a failure, a resumption.
    case read(MediaEvent)
    /// The frame rate the clock runs at, and where it came from.
    case frameRate(FrameRateChoice)
    /// A `sendID3` call, `lateness` (of the feeder's clock) after the frame that brought its tag
    /// due: the pacing error (a timer's wake-up delay, a busy process).
    case delivered(lateness: Duration)
    /// The buffer ran dry this long (of the feeder's clock: a live stall), and media came again.
    case stalled(for: Duration)
}

extension AsyncSequence where Element == MeteringEvent {
    /// Pulls every event, so the session runs to its end; the number of `sendID3` calls, and
    /// what the source threw, if it did.
    @discardableResult
    package func deliveries() async -> (calls: Int, failure: Failure?) {
        var calls = 0
        var iterator = makeAsyncIterator()
        do throws(Failure) {
            while let event = try await iterator.next(isolation: #isolation) {
                if case .delivered = event { calls += 1 }
            }
        } catch {
            return (calls, error)
        }
        return (calls, nil)
    }
}
