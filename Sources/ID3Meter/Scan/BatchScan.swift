import Foundation

/// What a batch does with one input's events, in the task that scans it (for a file read in
/// blocks, on the threads that read them, one at a time and in stream order): formatting
/// records and building reports there keeps that work parallel and stores only its outcome,
/// not the events, until the outcome's turn to be delivered.
package protocol ScanCollector: SendableMetatype {
    associatedtype Outcome: Sendable
    mutating func add(_ event: MediaEvent)
    func finish() -> Outcome
}

/// Scans many inputs at once, `jobs` at a time, each in a task of its own. Outcomes come in
/// input order, or as inputs finish when `ordered` is off. One input failing never stops the
/// others; cancelling the task starts no further input (those in progress end as their reads
/// see it), and every input started is delivered. With fewer inputs than jobs, the cores to spare read a big local MPEG-TS file in
/// blocks, each block's events collected by the thread that read it (`BlockwiseFileScan`);
/// any other input's events are collected in a task beside the one reading it.
package struct BatchScan: Sendable {
    package var scanner: TagScanner
    package var jobs: Int
    package var ordered: Bool

    package init(scanner: TagScanner, jobs: Int, ordered: Bool = true) {
        self.scanner = scanner
        self.jobs = max(jobs, 1)
        self.ordered = ordered
    }

    /// `collector(index, input)` makes each input's collector, in the task that scans it.
    package func run<Collector: ScanCollector>(_ inputs: [ScanInput], collector: @escaping @Sendable (Int, ScanInput) -> Collector,
                                              deliver: (_ index: Int, Collector.Outcome) -> Void) async {
        scanner.progress?.start(inputs: inputs.map(\.name))
        await withTaskGroup(of: (Int, Collector.Outcome).self) { group in
            var started = 0
            func startNext() {
                let index = started, input = inputs[index]
                started += 1
                let spare = inputs.count < jobs
                let inBlocks = scanner.readingBlocks(with: jobs / inputs.count)
                group.addTask {
                    let outcome: Collector.Outcome
                    if spare, jobs / inputs.count > 1, input.rendition == nil, inBlocks.readsInBlocks(input.location) {
                        outcome = await Self.scan(input, with: inBlocks, collector: collector(index, input))
                    } else if spare {
                        outcome = await Self.scan(input, with: scanner, collectingAside: { collector(index, input) })
                    } else {
                        outcome = await Self.scan(input, with: scanner, collector: collector(index, input))
                    }
                    scanner.progress?.finish(input.name)
                    return (index, outcome)
                }
            }
            while started < min(jobs, inputs.count) { startNext() }
            var waiting: [Int: Collector.Outcome] = [:]
            var nextToDeliver = 0
            for await (index, outcome) in group {
                if started < inputs.count, !Task.isCancelled { startNext() }
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

    /// `input` read, and its events collected, in this task (or the threads it reads blocks on).
    private static func scan<Collector: ScanCollector>(_ input: ScanInput, with scanner: TagScanner, collector: Collector) async
        -> Collector.Outcome {
        var consumer = collector
        await scanner.scan(input, emit: { consumer.add($0) }, afterEachChunk: {})
        return consumer.finish()
    }

    /// `input` read in this task, its events collected in a task beside it.
    private static func scan<Collector: ScanCollector>(_ input: ScanInput, with scanner: TagScanner,
                                                      collectingAside collector: @escaping @Sendable () -> Collector) async
        -> Collector.Outcome {
        let handoff = EventHandoff()
        async let outcome = { () async -> Collector.Outcome in
            var consumer = collector()
            while let batch = await handoff.next() {
                for event in batch { consumer.add(event) }
            }
            return consumer.finish()
        }()
        var sender = EventHandoff.Sender(handoff)
        await scanner.scan(input, emit: { sender.add($0) }, afterEachChunk: { await sender.room() })
        sender.finish()
        return await outcome
    }
}
