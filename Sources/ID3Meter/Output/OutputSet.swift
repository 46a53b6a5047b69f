import Synchronization

/// The outputs a run writes every record to (stdout, `--output`, the collector, the checkpoint),
/// in order, behind one lock: each output takes writes from one task at a time, and `serve`'s
/// channels meter on tasks of their own. What an output says about itself (its storage failing
/// or back, records it dropped) becomes records written to all of them, and goes to `notice`.
public final class OutputSet: MeterOutput, Sendable {
    private let outputs: Mutex<[any MeterOutput]>
    private let notice: @Sendable (MeterRecord) -> Void
    private let lost = Mutex(0)

    /// `notice` sees each alert and loss record an output raised (for the log).
    public init(_ outputs: sending [any MeterOutput], notice: @escaping @Sendable (MeterRecord) -> Void = { _ in }) {
        self.outputs = Mutex(outputs)
        self.notice = notice
    }

    /// Records some output had to drop, as its `loss` records said, up to now.
    public var recordsLost: Int { lost.withLock { $0 } }

    public func write(_ record: MeterRecord) {
        let notices = outputs.withLock { outputs in
            outputs.forEach { $0.write(record) }
            return Self.spread(&outputs)
        }
        say(notices)
    }

    /// Has every output try again what it holds; called about once a second.
    public func retry() {
        let notices = outputs.withLock { outputs in
            outputs.forEach { $0.retry() }
            return Self.spread(&outputs)
        }
        say(notices)
    }

    /// Each output's counts, for metrics.
    public var healths: [OutputHealth] { outputs.withLock { $0.compactMap(\.health) } }

    /// Flushes every output in turn and lets them go: a write after it goes nowhere. What an
    /// output could not store by then is said (to `notice`, and to the outputs not finished yet).
    public func finish() async {
        let all = outputs.withLock { outputs in
            let taken = outputs
            outputs = []
            return taken
        }
        for (index, output) in all.enumerated() {
            await output.finish()
            let notices = output.takeNotices()
            say(notices)
            for record in notices { all[(index + 1)...].forEach { $0.write(record) } }
        }
    }

    private func say(_ notices: [MeterRecord]) {
        let dropped = notices.reduce(0) { $0 + ($1.lostRecords ?? 0) }
        if dropped > 0 { lost.withLock { $0 += dropped } }
        notices.forEach(notice)
    }

    /// Writes each output's notices to every output, until none has more to say (a notice the
    /// failing output itself holds adds none).
    private static func spread(_ outputs: inout [any MeterOutput]) -> [MeterRecord] {
        var said: [MeterRecord] = []
        var rounds = 0
        while rounds < 4 {
            let notices = outputs.flatMap { $0.takeNotices() }
            guard !notices.isEmpty else { break }
            for record in notices { outputs.forEach { $0.write(record) } }
            said += notices
            rounds += 1
        }
        return said
    }
}
