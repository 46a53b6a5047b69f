import Foundation
import SampleGenerator

/// The built `id3-meter` executable, run as a user runs it.
enum Command {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String

        /// The meter's `send_id3` records in its JSON lines output, in the order it sent them.
        var sends: [Send] { Send.records(in: stdout) }
    }

    /// One `sendID3` call as the meter records it, comparable with the ground truth.
    struct Send: Equatable, CustomStringConvertible {
        var pts: Int64?
        var payload: String?

        init(pts: Int64?, payload: String?) {
            self.pts = pts
            self.payload = payload
        }

        init(_ expected: ExpectedFrame) { self.init(pts: expected.pts, payload: expected.owner) }

        var description: String { "\(pts.map(String.init) ?? "-") \(payload ?? "")" }

        static func records(in jsonLines: String) -> [Send] {
            jsonLines.split(separator: "\n")
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .filter { $0["type"] as? String == "send_id3" }
                .map { Send(pts: ($0["pts"] as? NSNumber)?.int64Value, payload: $0["payload"] as? String) }
        }
    }

    static let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("id3-meter")
    /// The release binary `make test` builds just before the suite and names in
    /// ID3METER_RELEASE_BINARY: for what is held to a production figure (a kubelet's 1 s).
    static let releaseBinary: URL? = ProcessInfo.processInfo.environment["ID3METER_RELEASE_BINARY"].flatMap { $0.isEmpty ? nil : $0 }
        .map { URL(fileURLWithPath: $0) }
    /// The project's sample generator, built beside it.
    static let sampleGenerator = binary.deletingLastPathComponent().appendingPathComponent("id3-sample-gen")

    /// A child still running after this long is killed, so that a test waiting on it ends (and
    /// fails) instead of holding the suite; no test keeps a child half as long.
    static let watchdog: TimeInterval = 600

    /// Starts the command (with `environment` added to the test's, in `directory` when given);
    /// the caller reads the pipes and waits. The pipes are relayed (`Relay`): the child never
    /// waits for the test to read.
    static func launch(_ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil,
                       binary: URL = binary) throws -> (process: Process, stdout: Pipe, stderr: Pipe) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let (out, err) = try Relay.run(process)
        watch(process)
        return (process, out, err)
    }

    /// Kills `process` if it still runs `after` seconds from now, saying so on the suite's stderr.
    static func watch(_ process: Process, after seconds: TimeInterval = watchdog) {
        let pid = process.processIdentifier
        let name = "\(process.executableURL?.lastPathComponent ?? "child") \(process.arguments ?? [])"
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak process] in
            guard let process, process.isRunning, process.processIdentifier == pid else { return }
            FileHandle.standardError.write(Data("watchdog: killed \(name) after \(Int(seconds)) s\n".utf8))
            kill(pid, SIGKILL)
        }
    }

    /// Runs the command to its end.
    static func run(_ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil,
                    binary: URL = binary) throws -> Result {
        let (process, out, err) = try launch(arguments, environment: environment, in: directory, binary: binary)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }
}

/// A child's output pipe emptied as the child writes, whether the test reads yet or not. A pipe
/// holds 64 KB: a child that filled one (a serve logging for a minute to a stderr nobody reads)
/// would stop at its next write, and a test waiting for its other pipe, or its exit, would wait
/// for ever. The bytes wait here, in memory, until the test reads them from `toTest`, which ends
/// when the child's end does.
final class Relay: @unchecked Sendable {
    let fromChild = Pipe()
    let toTest = Pipe()
    private let condition = NSCondition()
    private var pending = Data()
    private var ended = false

    /// Runs `process` with its stdout and stderr relayed; the pipes the test reads them from.
    static func run(_ process: Process) throws -> (stdout: Pipe, stderr: Pipe) {
        let out = Relay(), err = Relay()
        process.standardOutput = out.fromChild
        process.standardError = err.fromChild
        try process.run()
        out.start()
        err.start()
        return (out.toTest, err.toTest)
    }

    private func start() {
        Thread.detachNewThread { [self] in
            while case let chunk = fromChild.fileHandleForReading.availableData, !chunk.isEmpty {
                condition.lock()
                pending += chunk
                condition.signal()
                condition.unlock()
            }
            condition.lock()
            ended = true
            condition.signal()
            condition.unlock()
        }
        Thread.detachNewThread { [self] in
            while true {
                condition.lock()
                while pending.isEmpty && !ended { condition.wait() }
                let (chunk, last) = (pending, ended)
                pending = Data()
                condition.unlock()
                // Blocks while the test's pipe is full; the child's side goes on filling `pending`.
                if !chunk.isEmpty { try? toTest.fileHandleForWriting.write(contentsOf: chunk) }
                if last { break }
            }
            try? toTest.fileHandleForWriting.close()
        }
    }
}

/// A child's JSON lines as they come, read from its pipe without losing any: the bytes after the
/// line a wait stopped at are kept for the next wait.
final class RecordReader {
    private let pipe: Pipe
    private var pending = Data()
    /// Every record read so far, in order.
    private(set) var records: [[String: Any]] = []

    init(_ pipe: Pipe) { self.pipe = pipe }

    /// Reads until `done` holds for a record (the records before it and it are in `records`), or
    /// the pipe ends.
    func read(until done: ([String: Any]) -> Bool) {
        while true {
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = pending[pending.startIndex..<newline]
                pending = Data(pending[(newline + 1)...])
                guard let record = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else { continue }
                records.append(record)
                if done(record) { return }
            }
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { return }
            pending += chunk
        }
    }
}
