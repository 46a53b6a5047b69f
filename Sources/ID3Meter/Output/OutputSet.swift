import Synchronization

/// The outputs a run writes every record to (stdout, a records file, the collector, the
/// checkpoint), in order, one record at a time: a record has gone through every output before
/// the next one starts, however many tasks write (`serve`'s channels). The checkpoint, last,
/// counts on it: the records file it points into holds no record it has not seen. What an
/// output says about itself (its storage failing or back, records it dropped) becomes records
/// written to all of them, and goes to `notice`.
public actor OutputSet: MeterOutput {
    private var outputs: [any MeterOutput]
    /// The name every record written is given as `meter`; `nil` leaves records as they are.
    private let meter: String?
    private let notice: @Sendable (MeterRecord) -> Void
    private let lost = Mutex(0)
    /// The work queued last; each piece waits for the one before (an actor alone would let a
    /// second record in while the first waits on an output that is an actor).
    private var last: Task<Void, Never>?

    /// `notice` sees each alert and loss record an output raised (for the log). `meter` names
    /// the meter in every record, those the outputs raise included.
    public init(_ outputs: [any MeterOutput], meter: String? = nil, notice: @escaping @Sendable (MeterRecord) -> Void = { _ in }) {
        self.outputs = outputs
        self.meter = meter
        self.notice = notice
    }

    private func named(_ record: MeterRecord) -> MeterRecord {
        guard let meter else { return record }
        var record = record
        record.meter = meter
        return record
    }

    /// Records some output had to drop, as its `loss` records said, up to now.
    public nonisolated var recordsLost: Int { lost.withLock { $0 } }

    public func write(_ record: MeterRecord) async {
        await inTurn { set in
            let record = set.named(record)
            for output in set.outputs { await output.write(record) }
            await set.spread()
        }
    }

    /// Has every output try again what it holds; called about once a second.
    public func retry() async {
        await inTurn { set in
            for output in set.outputs { await output.retry() }
            await set.spread()
        }
    }

    /// Each output's counts, for metrics.
    public var healths: [OutputHealth] {
        get async {
            var healths: [OutputHealth] = []
            for output in outputs { if let health = await output.health { healths.append(health) } }
            return healths
        }
    }

    /// Flushes every output in turn and lets them go: a write after it goes nowhere. What an
    /// output could not store by then is said (to `notice`, and to the outputs not finished yet).
    public func finish() async {
        await inTurn { set in
            let all = set.outputs
            set.outputs = []
            for (index, output) in all.enumerated() {
                await output.finish()
                let notices = await output.takeNotices().map(set.named)
                set.say(notices)
                for record in notices {
                    for later in all[(index + 1)...] { await later.write(record) }
                }
            }
        }
    }

    /// Runs `work` once every piece queued before it has ended. Not cancelled with its caller:
    /// a record is written to every output or to none.
    private func inTurn(_ work: @escaping @Sendable (isolated OutputSet) async -> Void) async {
        let previous = last
        let next = Task {
            await previous?.value
            await work(self)
        }
        last = next
        await next.value
    }

    private func say(_ notices: [MeterRecord]) {
        let dropped = notices.reduce(0) { total, notice in
            if case .loss(let loss) = notice.content { total + loss.records } else { total }
        }
        if dropped > 0 { lost.withLock { $0 += dropped } }
        notices.forEach(notice)
    }

    /// Writes each output's notices to every output, until none has more to say (a notice the
    /// failing output itself holds adds none).
    private func spread() async {
        var rounds = 0
        while rounds < 4 {
            var notices: [MeterRecord] = []
            for output in outputs { notices += await output.takeNotices().map(named) }
            guard !notices.isEmpty else { break }
            for record in notices {
                for output in outputs { await output.write(record) }
            }
            say(notices)
            rounds += 1
        }
    }
}
