import Synchronization

/// Passes a source's events on, all but the problems past the first few of a kind
/// (`ProblemTally`): those are summed up in one line per kind at each `summarise()`, or every
/// `summaryEvery` held back. A stream full of damage then costs neither memory (the events do
/// not queue up ahead of the feeder) nor a flooded log.
final class ProblemThrottle: Sendable {
    static let summaryEvery = 10_000

    private struct State {
        var failures = ProblemTally()
        var warnings = ProblemTally()
        var held = 0
    }

    private let source: String
    private let state = Mutex(State())
    private let yield: @Sendable (SourceEvent) -> Void

    init(source: String, yield: @escaping @Sendable (SourceEvent) -> Void) {
        self.source = source
        self.yield = yield
    }

    func callAsFunction(_ event: SourceEvent) {
        let admitted: Bool
        switch event {
        case .failure(let failure): admitted = admit(failure.description, \.failures)
        case .warning(let warning): admitted = admit(warning.description, \.warnings)
        case .malformed(let error, _, let origin): admitted = admit("\(origin.segment?.uri ?? origin.source): \(error)", \.warnings)
        case .opened, .chunk: admitted = true
        }
        if admitted { yield(event) }
        if state.withLock({ $0.held >= Self.summaryEvery }) { summarise() }
    }

    /// A line for each kind held back since the last summary: failures as failures, the rest as warnings.
    func summarise() {
        let (failures, warnings) = state.withLock { state in
            state.held = 0
            return (state.failures.summaries(), state.warnings.summaries())
        }
        failures.forEach { yield(.failure(InputFailure(source: source, reason: $0))) }
        warnings.forEach { yield(.warning(InputFailure(source: source, reason: $0))) }
    }

    private func admit(_ message: String, _ tally: WritableKeyPath<State, ProblemTally>) -> Bool {
        state.withLock { state in
            let admitted = state[keyPath: tally].admit(message)
            if !admitted { state.held += 1 }
            return admitted
        }
    }
}
