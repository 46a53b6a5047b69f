import Foundation
import ID3Meter
import ID3MeterReport
import Logging

/// A collector's database read for reports (`id3-meter report --database`, `serve
/// --report-database`): opened for each report and closed after it, read-only, never created
/// nor brought up to date.
package struct ReportDatabase: Sendable {
    /// An SQLite file or a PostgreSQL URL.
    package let location: String

    package init(_ location: String) { self.location = location }

    private var isPostgres: Bool { location.hasPrefix("postgres://") || location.hasPrefix("postgresql://") }

    /// The location as a report names it: a URL without its password.
    package var redacted: String {
        location.replacing(/:\/\/([^:@\/]*):[^@\/]*@/, with: { "://\($0.output.1):***@" })
    }

    /// The report of `days` (of `channels` only, when given) from the database.
    package func report(days: [String], builder: CoverageBuilder, channels: Set<String>? = nil, logger: Logger,
                        progress: (Int, Int) -> Void = { _, _ in }) async throws(StoreError) -> CoverageReport {
        func closing(_ store: some RecordStore & CoverageReading) async throws(StoreError) -> CoverageReport {
            do {
                let report = try await builder.report(days: days, from: store, source: redacted, channels: channels, progress: progress)
                await store.close()
                return report
            } catch {
                await store.close()
                throw error
            }
        }
        if isPostgres { return try await closing(PostgresRecordStore.openForReading(url: location, logger: logger)) }
        return try await closing(SQLiteRecordStore.openForReading(path: location, logger: logger))
    }
}
