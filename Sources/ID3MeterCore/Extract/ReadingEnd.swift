/// The failure that ended a reading, told apart from those the reading went on after: a reading
/// sequence throws the first and hands out the others as `.failure` events, as a player stops on
/// a fatal error and carries on after the rest.
///
/// A failure of a kind that can end a reading (`InputFailure.Kind.endsReading`) is held back
/// until the next event shows whether the reading went on: if one comes, the failure goes out
/// before it; if the reading ends, it is the one thrown. What a reading says as it closes
/// passes while the failure waits: summaries of problems held back (`.heldBack`) and the
/// program's media time (`.mediaTime`, from an extractor finished after the failure).
package struct ReadingEnd: Sendable {
    private var held: InputFailure?

    package init() {}

    /// What to hand out now that `event` came, in order.
    package mutating func pass(_ event: MediaEvent) -> [MediaEvent] {
        if held != nil, event.closesAReading { return [event] }
        let before = held.map { [MediaEvent.failure($0)] } ?? []
        held = nil
        if case .failure(let failure) = event, failure.kind.endsReading {
            held = failure
            return before
        }
        return before + [event]
    }

    /// The failure that ended the reading, once it has ended; `nil` when it ended otherwise.
    package var failure: InputFailure? { held }
}

extension MediaEvent {
    /// An event a reading hands out as it closes, whatever ended it.
    fileprivate var closesAReading: Bool {
        switch self {
        case .mediaTime: true
        case .warning(let warning): if case .heldBack = warning.kind { true } else { false }
        default: false
        }
    }
}

/// A reading's events with the failure that ended it thrown (`ReadingEnd`): `TagSource`'s and
/// `TagScanner.events`' iterator over the events their reading task hands over.
package struct ReadingIterator<Base: AsyncIteratorProtocol>: AsyncIteratorProtocol
where Base.Element == MediaEvent, Base.Failure == Never {
    private var base: Base
    private var end = ReadingEnd()
    private var ready: [MediaEvent] = []
    private var ended = false

    package init(_ base: Base) { self.base = base }

    package mutating func next() async throws(InputFailure) -> MediaEvent? {
        try await next(isolation: nil)
    }

    package mutating func next(isolation actor: isolated (any Actor)?) async throws(InputFailure) -> MediaEvent? {
        while ready.isEmpty {
            guard !ended else { return nil }
            guard let event = await base.next(isolation: actor) else {
                ended = true
                guard let failure = end.failure else { return nil }
                // Cancelled, the reading did not end by the failure: it is an event like the rest.
                if Task.isCancelled { return .failure(failure) }
                throw failure
            }
            ready = end.pass(event)
        }
        return ready.removeFirst()
    }
}
