import Synchronization

/// Passes a source's events on, all but the problems past the first few of a kind
/// (`ProblemTally`; segments and reloads given up on always pass): those are summed up in one line per kind after each segment, at the
/// source's end (`summarise()`), and in between whenever ten times more have been
/// held back than at the last summary. A stream full of damage then costs neither memory (the
/// events do not queue up ahead of the feeder) nor a flooded log.
final class ProblemThrottle: Sendable {
    private struct State {
        var failures = ProblemTally()
        var warnings = ProblemTally()
        var held = 0
        var nextSummary = 1_000
    }

    private let source: String
    private let state = Mutex(State())
    private let yield: @Sendable (MediaEvent) -> Void

    init(source: String, yield: @escaping @Sendable (MediaEvent) -> Void) {
        self.source = source
        self.yield = yield
    }

    func callAsFunction(_ event: MediaEvent) {
        let admitted: Bool
        switch event {
        // A segment or a reload given up on comes at most once a segment: each is a record and
        // moves the channel's watch (segments failing, playlist unreachable), so none is held back.
        case .failure(let failure) where [.segmentSkipped, .reloadFailed].contains(failure.code): admitted = true
        case .failure(let failure): admitted = admit(failure.kind.description, \.failures)
        case .warning(let warning): admitted = admit(warning.kind.description, \.warnings)
        case .malformed(let error, _, _): admitted = admit("malformed ID3: \(error)", \.warnings)
        case .opened, .tag, .segment, .resumed, .mediaTime: admitted = true
        }
        if admitted { yield(event) }
        if case .segment = event { return summarise() }
        let due = state.withLock { state in
            guard state.held >= state.nextSummary else { return false }
            state.nextSummary = state.held * 10
            return true
        }
        if due { summarise(resettingHeld: false) }
    }

    /// A line for each kind held back since the last summary: failures as failures, the rest as warnings.
    func summarise(resettingHeld: Bool = true) {
        let (failures, warnings) = state.withLock { state in
            if resettingHeld { (state.held, state.nextSummary) = (0, 1_000) }
            return (state.failures.heldBack(), state.warnings.heldBack())
        }
        failures.forEach { yield(.failure(InputFailure(source: source, .heldBack(count: $0.count, last: $0.last)))) }
        warnings.forEach { yield(.warning(InputFailure(source: source, .heldBack(count: $0.count, last: $0.last)))) }
    }

    private func admit(_ message: String, _ tally: WritableKeyPath<State, ProblemTally>) -> Bool {
        state.withLock { state in
            let admitted = state[keyPath: tally].admit(message)
            if !admitted { state.held += 1 }
            return admitted
        }
    }
}
