import Foundation
import Logging
import ServiceLifecycle

/// Deletes what is older than the retention (`--keep`): at start, then every hour, until the
/// group shuts down; then closes the store, after the API has stopped taking batches.
public struct Retention: Service {
    public let store: any RecordStore
    /// How long records and batch ids are kept.
    public let keep: Duration
    public let logger: Logger

    public init(store: any RecordStore, keep: Duration, logger: Logger) {
        self.store = store
        self.keep = keep
        self.logger = logger
    }

    public func run() async {
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                let before = Date().timeIntervalSince1970 - Double(keep.components.seconds)
                do {
                    let deleted = try await store.purge(before: before)
                    if deleted > 0 { logger.notice("deleted \(deleted) records older than the retention") }
                } catch where !Task.isCancelled {
                    logger.error("\(error)")
                } catch {
                    // Shutting down (a listener that could not open ends the group at once):
                    // the purge was cut short, not failed, and runs again at the next start.
                }
                try? await Task.sleep(for: .seconds(3_600))
            }
        }
        await store.close()
    }
}
