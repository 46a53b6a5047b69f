import Foundation
import Logging
import ServiceLifecycle

/// Folds the coverage's hours (`RecordStore.foldHours`) every `every`, until the group shuts
/// down: a backlog (a database from before schema version 3, a spool drained late) a
/// transaction of a few thousand hours at a time, batches stored in between.
public struct HourFolding: Service {
    public let store: any RecordStore
    public let every: Duration
    public let logger: Logger

    public init(store: any RecordStore, every: Duration = .seconds(600), logger: Logger) {
        self.store = store
        self.every = every
        self.logger = logger
    }

    public func run() async {
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                var total = 0
                do {
                    while !Task.isCancelled {
                        let folded = try await store.foldHours(now: Date().timeIntervalSince1970)
                        total += folded
                        if folded < CollectorSchema.hoursPerFold { break }
                    }
                    if total > 0 { logger.info("folded \(total) hours of coverage") }
                } catch where !Task.isCancelled {
                    // The report folds an hour not stored from its minutes: slower, the same day.
                    logger.error("\(error)")
                } catch {
                    // Shutting down: the fold goes on at the next start.
                }
                try? await Task.sleep(for: every)
            }
        }
    }
}
