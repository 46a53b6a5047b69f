import Foundation
import Testing
import SampleGenerator

/// A scan stopped by SIGINT or SIGTERM: it stops reading, writes the summary and a whole report
/// of what was read, marked incomplete, and exits 130 or 143.
@Suite("scan stopped by a signal", .serialized, .timeLimit(.minutes(2)))
struct ScanInterruptTests {
    /// 1,000 recordings on a server that takes 20 ms to answer each: long enough to be stopped.
    func stop(with signal: Int32, report name: String) throws -> (status: Int32, report: String, stdout: String, stderr: String) {
        let sample = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Samples.path("ts/nielsen.ts"))))
        let server = try LocalHTTPServer { _ in
            Thread.sleep(forTimeInterval: 0.02)
            return LocalHTTPServer.Response(body: sample)
        }
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let list = folder.appendingPathComponent("inputs.txt")
        try (0..<1_000).map { server.url("rec\($0).ts") }.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
        let report = folder.appendingPathComponent(name)
        let process = Process()
        process.executableURL = Command.binary
        process.arguments = ["scan", "-", "--jobs", "2", "--format", "jsonl", "--report", report.path]
        process.standardInput = try FileHandle(forReadingFrom: list)
        let (out, err) = try Relay.run(process)
        Command.watch(process)
        defer { if process.isRunning { process.terminate() } }
        var received = Data()
        while String(decoding: received, as: UTF8.self).split(separator: "\n").count < 30 {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received += chunk
        }
        kill(process.processIdentifier, signal)
        received += out.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOf: report, encoding: .utf8)) ?? "",
                String(decoding: received, as: UTF8.self), stderr)
    }

    @Test func sigtermWritesTheSummaryAndAWholeReportMarkedIncomplete() throws {
        let (status, report, stdout, stderr) = try stop(with: SIGTERM, report: "report.json")
        #expect(status == 143, "\(stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any], "\(report.prefix(200))")
        let sources = try #require(json["sources"] as? [Any])
        #expect(sources.count >= 3 && sources.count < 1_000, "\(sources.count) sources")
        #expect((json["incomplete"] as? String)?.contains("stopped by SIGTERM after") == true, "\(json["incomplete"] ?? "none")")
        let lines = stdout.split(separator: "\n")
        #expect(lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil }, "whole records only")
        let total = try #require(json["total"] as? [String: Any])
        #expect(total["nielsen_tags"] as? Int == lines.count, "the report covers exactly the records written")
        #expect(stderr.contains("Nielsen tags") || stderr.contains("tags"), "the summary: \(stderr)")
        #expect(stderr.contains("stopped by SIGTERM"))
    }

    @Test func sigintExits130WithAReadableTextReport() throws {
        let (status, report, _, stderr) = try stop(with: SIGINT, report: "report.txt")
        #expect(status == 130, "\(stderr)")
        #expect(report.hasPrefix("Nielsen ID3 tag QA report\nINCOMPLETE: the scan was stopped by SIGINT after"), "\(report.prefix(300))")
        #expect(report.hasSuffix("\n"))
    }
}

/// Records that stdout refuses (here the kernel's /dev/full: ENOSPC on every write) are counted
/// and said, and the run fails, in both commands.
@Suite("stdout that refuses records", .serialized, .timeLimit(.minutes(1)))
struct RefusingStdoutTests {
    func run(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = Command.binary
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/full")
        let err = Pipe()
        process.standardError = err
        try process.run()
        Command.watch(process)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, stderr)
    }

    @Test func scanSaysHowManyBytesOfRecordsWereLost() throws {
        let (status, stderr) = try run(["scan", "--format", "jsonl", Samples.path("ts/nielsen.ts")])
        #expect(status == 1, "\(stderr)")
        #expect(stderr.contains("stdout: records could not be written (No space left on device);"), "\(stderr)")
        #expect(stderr.contains("bytes of them were lost"))
    }

    @Test func theMeterSaysWhichRecordsWereLostAndFails() throws {
        let (status, stderr) = try run(["--speed", "max", "--format", "jsonl", Samples.path("hls/master.m3u8")])
        #expect(status == 1, "\(stderr)")
        #expect(stderr.contains("stdout cannot be written (No space left on device)"), "\(stderr)")
        #expect(stderr.contains("were dropped from stdout"), "\(stderr)")
        let delivered = try #require(stderr.firstMatch(of: /(\d+) tags sent/).flatMap { Int($0.output.1) })
        // Every delivery, the startup and shutdown events, and the alert that stdout failed.
        #expect(stderr.contains(", \(delivered + 3) records lost by an output"), "\(stderr)")
    }
}
