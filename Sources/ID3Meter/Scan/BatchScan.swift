/// What a batch does with one input's events, in the task that scans it: formatting records
/// and building reports there keeps that work parallel and stores only its outcome, not the
/// events, until the outcome's turn to be delivered.
package protocol ScanCollector: SendableMetatype {
    associatedtype Outcome: Sendable
    mutating func add(_ event: MediaEvent)
    func finish() -> Outcome
}

/// Scans many inputs at once, `jobs` at a time, each in a task of its own. Outcomes come in
/// input order, or as inputs finish when `ordered` is off. One input failing never stops the
/// others.
package struct BatchScan: Sendable {
    package var scanner: Scanner
    package var jobs: Int
    package var ordered: Bool

    package init(scanner: Scanner, jobs: Int, ordered: Bool = true) {
        self.scanner = scanner
        self.jobs = max(jobs, 1)
        self.ordered = ordered
    }

    /// `collector(index, input)` makes each input's collector, in the task that scans it.
    package func run<Collector: ScanCollector>(_ inputs: [String], collector: @escaping @Sendable (Int, String) -> Collector,
                                              deliver: (_ index: Int, Collector.Outcome) -> Void) async {
        scanner.progress?.start(inputs: inputs)
        await withTaskGroup(of: (Int, Collector.Outcome).self) { group in
            var started = 0
            func startNext() {
                let index = started, input = inputs[index]
                started += 1
                group.addTask {
                    var consumer = collector(index, input)
                    await scanner.scan(input) { consumer.add($0) }
                    scanner.progress?.finish(input)
                    return (index, consumer.finish())
                }
            }
            while started < min(jobs, inputs.count) { startNext() }
            var waiting: [Int: Collector.Outcome] = [:]
            var nextToDeliver = 0
            for await (index, outcome) in group {
                if started < inputs.count { startNext() }
                guard ordered else {
                    deliver(index, outcome)
                    continue
                }
                waiting[index] = outcome
                while let next = waiting.removeValue(forKey: nextToDeliver) {
                    deliver(nextToDeliver, next)
                    nextToDeliver += 1
                }
            }
        }
    }
}
