import Synchronization

/// Values a `@Sendable` handler hands over, kept for the test to read.
final class Collected<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    func append(_ value: Value) { values.withLock { $0.append(value) } }

    var all: [Value] { values.withLock { $0 } }
}
