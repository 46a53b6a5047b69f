import Foundation
import Testing
@testable import ID3MeterServe

/// Another session holding a PostgreSQL lock in an open transaction, as a batch stuck in its
/// transaction would (psql, fed through its stdin): taken by `statement`, held once `init`
/// returns, until `release()`.
final class HeldLock {
    private let psql = Process()
    private let input = Pipe()

    /// An advisory lock, shared.
    convenience init(url: String, key: Int) throws {
        try self.init(url: url, taking: CollectorSchema.sharedLock(key).sql)
    }

    init(url: String, taking statement: String) throws {
        psql.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        psql.arguments = [url, "-qAt", "-v", "ON_ERROR_STOP=1"]
        psql.standardInput = input
        let (out, _) = try Relay.run(psql)
        Command.watch(psql, after: 60)
        input.fileHandleForWriting.write(Data("BEGIN;\n\(statement);\n\\echo held\n".utf8))
        var said = Data()
        while !String(decoding: said, as: UTF8.self).contains("held") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw TestFailure("psql ended before taking the lock: \(String(decoding: said, as: UTF8.self))") }
            said += chunk
        }
    }

    /// Commits the transaction and waits for psql to end; whether it ended well.
    func release() throws -> Bool {
        input.fileHandleForWriting.write(Data("COMMIT;\n".utf8))
        try input.fileHandleForWriting.close()
        psql.waitUntilExit()
        return psql.terminationStatus == 0
    }
}
