/// Scans many inputs at once, `jobs` at a time, each on its own blocking executor. Results
/// come in input order (each input's events in stream order), or as inputs finish when
/// `ordered` is off. One input failing never stops the others.
public struct BatchScan: Sendable {
    public struct Result: Sendable {
        public var index: Int
        public var input: String
        public var events: [ScanEvent]
    }

    public var scanner: Scanner
    public var jobs: Int
    public var ordered: Bool

    public init(scanner: Scanner, jobs: Int, ordered: Bool = true) {
        self.scanner = scanner
        self.jobs = max(jobs, 1)
        self.ordered = ordered
    }

    public func run(_ inputs: [String], deliver: (Result) -> Void) async {
        scanner.progress?.start(inputs: inputs)
        var partitioned = scanner
        // Cores that would sit idle with fewer inputs than jobs go to splitting large files.
        partitioned.filePartitions = max(1, jobs / max(1, min(jobs, inputs.count)))
        let scanner = partitioned
        await withTaskGroup(of: Result.self) { group in
            var started = 0
            func startNext() {
                let index = started, input = inputs[index]
                started += 1
                group.addTask {
                    await BlockingExecutor(label: "scan").run {
                        var events: [ScanEvent] = []
                        scanner.scan(input) { events.append($0) }
                        scanner.progress?.finish(input)
                        return Result(index: index, input: input, events: events)
                    }
                }
            }
            while started < min(jobs, inputs.count) { startNext() }
            var waiting: [Int: Result] = [:]
            var nextToDeliver = 0
            for await result in group {
                if started < inputs.count { startNext() }
                guard ordered else {
                    deliver(result)
                    continue
                }
                waiting[result.index] = result
                while let next = waiting.removeValue(forKey: nextToDeliver) {
                    deliver(next)
                    nextToDeliver += 1
                }
            }
        }
    }
}
