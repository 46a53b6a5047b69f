import ID3MeterCore
import ServiceLifecycle

/// A run's record outputs as a swift-service-lifecycle `Service`. Until its group shuts down
/// gracefully (or the task is cancelled), each collector sends its spool and every output tries
/// again, once a second, what it holds (`OutputSet.retry()`); then every output is flushed and
/// each collector sends or spools what is left (`OutputSet.finish()`) before `run` returns. Put
/// it before the services that write to it, so that it ends after them.
public struct OutputService: Service {
    public let outputs: OutputSet
    /// The outputs of `outputs` that send: each runs as long as the service does.
    public let collectors: [CollectorOutput]

    public init(_ outputs: OutputSet, collectors: [CollectorOutput] = []) {
        self.outputs = outputs
        self.collectors = collectors
    }

    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            for collector in collectors { group.addTask { await collector.run() } }
            try? await cancelWhenGracefulShutdown { [outputs] in
                while !Task.isCancelled {
                    try await Task.sleep(for: .seconds(1))
                    await outputs.retry()
                }
            }
            // A collector's `finish`, among the others, ends its `run`.
            await outputs.finish()
        }
    }
}
