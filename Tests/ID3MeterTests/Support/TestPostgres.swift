import Foundation
import Synchronization
import Testing

/// The PostgreSQL server the collector and report tests keep records in. `make test` sets
/// ID3METER_TEST_POSTGRES=start: the first test that needs it starts a private server
/// (scripts/postgres-test-db.sh), so it is fresh when used, whatever ran before; a URL there is
/// used as it is. Without the variable, those tests are disabled, saying why.
enum TestPostgres {
    static let requested = ProcessInfo.processInfo.environment["ID3METER_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    static let why = "make test sets ID3METER_TEST_POSTGRES=start (a private PostgreSQL server), or give a database's URL"

    private static let started = Mutex<Result<String, TestFailure>?>(nil)

    /// The test database's URL, its server started at the first call.
    static func url() throws -> String {
        let requested = try #require(requested, "\(why)")
        guard requested == "start" else { return requested }
        let result = started.withLock { started in
            if let started { return started }
            let script = Samples.root.appendingPathComponent("scripts/postgres-test-db.sh").path
            let outcome: Result<String, TestFailure>
            do {
                let run = try Command.run(["start"], binary: URL(fileURLWithPath: script))
                let url = run.stdout.split(separator: "\n").last.map(String.init) ?? ""
                outcome = run.status == 0 && url.hasPrefix("postgres://") ? .success(url)
                    : .failure(TestFailure("\(script) exited \(run.status): \(run.stdout) \(run.stderr)"))
            } catch {
                outcome = .failure(TestFailure("cannot run \(script): \(error)"))
            }
            started = outcome
            return outcome
        }
        return try result.get()
    }

    /// The test database, emptied: a collector makes its schema anew. When the server does not
    /// answer, the failure says what its log says.
    static func empty() throws -> String {
        let url = try url()
        let emptied = try Command.runTool("/usr/bin/psql", [url, "-qc", "DROP SCHEMA public CASCADE; CREATE SCHEMA public"])
        guard emptied.status == 0 else {
            let logs = (try? Command.runTool("/bin/sh", ["-c", "tail -n 30 /tmp/id3meter-postgres.*/server.log"]).output) ?? ""
            throw TestFailure("cannot empty \(url) (psql exited \(emptied.status)): \(emptied.output)\n\(logs)")
        }
        return url
    }
}
