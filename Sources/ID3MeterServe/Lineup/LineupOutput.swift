import ID3Meter
import Synchronization

/// The outputs every channel of a line-up writes to (stdout, `--output`, the collector),
/// behind one lock: a `MeterOutput` takes writes from one task at a time, and each channel
/// meters on a task of its own.
public final class LineupOutput: Sendable {
    private let outputs: Mutex<[any MeterOutput]>

    public init(_ outputs: sending [any MeterOutput]) {
        self.outputs = Mutex(outputs)
    }

    public func write(_ record: MeterRecord) {
        outputs.withLock { outputs in outputs.forEach { $0.write(record) } }
    }

    /// Flushes every output and lets them go: a write after it goes nowhere.
    public func finish() async {
        let all = outputs.withLock { outputs in
            let taken = outputs
            outputs = []
            return taken
        }
        for output in all { await output.finish() }
    }
}
