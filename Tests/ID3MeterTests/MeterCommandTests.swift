import Foundation
import ID3Meter
import Testing
import SampleGenerator

/// `id3-meter URL` as a user runs it.
@Suite("id3-meter (meter)", .serialized, .timeLimit(.minutes(3)))
struct MeterCommandTests {
    func launch(_ arguments: [String]) throws -> (Process, Pipe, Pipe) { try Command.launch(arguments) }

    func records(_ data: Data) throws -> [[String: Any]] {
        try String(decoding: data, as: UTF8.self).split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func metersAVODSampleAtMaximumSpeed() throws {
        let (process, out, _) = try launch(["--speed", "max", "--format", "jsonl", Samples.path("hls/master.m3u8")])
        let lines = try records(out.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let expected = try Samples.expected("hls/expected.jsonl").filter(\.nielsen)
        let sends = lines.filter { $0["type"] as? String == "send_id3" }
        #expect(sends.map { $0["payload"] as? String } == expected.map(\.owner))
        #expect(sends.map { ($0["pts"] as? NSNumber)?.int64Value } == expected.map(\.pts))
        #expect(sends.map { $0["segment"] as? String } == expected.map { $0.segment.map { Samples.path("hls/low/\($0)") } })
        #expect(sends.allSatisfy { $0["sent_at"] is Double && $0["media_sequence"] != nil && $0["program_date_time"] is String })
        #expect(lines.first?["event"] as? Int == 2001)
        #expect(lines.last?["event"] as? Int == 2002)
    }

    @Test func sigintEndsTheSessionFlushesAndExitsZero() throws {
        let (process, out, _) = try launch(["--format", "jsonl", Samples.path("spec/hls/index.m3u8")])
        // The first tag plays at once; the next one is 10 s away.
        var received = Data()
        while !String(decoding: received, as: UTF8.self).contains("send_id3") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received += chunk
        }
        kill(process.processIdentifier, SIGINT)
        received += out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = try records(received)
        #expect(lines.filter { $0["type"] as? String == "send_id3" }.count == 1)
        #expect(lines.last?["event"] as? Int == 2002, "end() was called")
    }

    @Test func deliversToACollector() throws {
        let collector = try TestCollector()
        defer { collector.server.stop() }
        let spool = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: spool) }
        let (process, out, _) = try launch(["--speed", "max", "--format", "jsonl", "--collector", collector.url.absoluteString,
                                            "--spool", spool.path, Samples.path("spec/hls/index.m3u8")])
        let lines = try records(out.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let collected = collector.batches.sorted { $0.key < $1.key }.flatMap(\.value)
        #expect(collected.count == lines.count)
        #expect(collected.compactMap(\.payload) == lines.compactMap { $0["payload"] as? String })
    }

    @Test func badCommandLinesExit2BeforeAnyWork() throws {
        for arguments in [["--ad-model", "3", "x.m3u8"], ["--speed", "0", "x.m3u8"], ["--speed", "fast", "x.m3u8"],
                          ["--collector", "ftp://x", "x.m3u8"], ["--fps", "-1", "x.m3u8"], ["--output-max-size", "10", "x.m3u8"],
                          ["--spool-max-size", "0", "x.m3u8"], ["--output-keep", "0", "x.m3u8"],
                          ["ftp://host/live.m3u8"], ["http://"], ["http://exa mple.com/x.m3u8"], ["scan", "gopher://x/y.ts"]] {
            let (process, _, err) = try launch(arguments)
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 2, "\(arguments): \(message)")
            #expect(message.contains("Error:"), "\(arguments): \(message)")
        }
    }

    /// An output that passes the look before the run (root passes `access()` on /proc) but cannot
    /// be opened when the run starts: one line naming it and the reason, exit 1, no usage text.
    @Test func anOutputThatCannotBeOpenedIsOneLineAndExit1() throws {
        let unwritable = "/proc/id3-meter-cannot-write-here"
        for (arguments, words) in [(["--output", unwritable + "/out.jsonl", "x.m3u8"], "cannot open --output \(unwritable)/out.jsonl: "),
                                   (["--collector", "http://127.0.0.1:9/", "--spool", unwritable, "x.m3u8"],
                                    "cannot use --spool \(unwritable): ")] {
            let (process, _, err) = try launch(arguments)
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 1, "\(arguments): \(message)")
            #expect(message.split(separator: "\n").count == 1 && message.contains(words) && !message.contains("Usage"), "\(message)")
        }
    }

    @Test func anUnreadableStreamExits1WithItsName() throws {
        let (process, _, err) = try launch(["--speed", "max", "/nonexistent/live.m3u8"])
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(message.contains("/nonexistent/live.m3u8"))
    }

    @Test func outputFileAndDuration() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("meter.jsonl").path
        let started = Date()
        // The spec HLS plays its first tag at once and the next 10 s later: --duration 1 ends between them.
        let run = try Command.run(["--duration", "1", "--format", "jsonl", "--output", file, Samples.path("spec/hls/index.m3u8")])
        #expect(run.status == 0)
        #expect(Date().timeIntervalSince(started) < 5)
        let lines = try records(Data(run.stdout.utf8))
        #expect(lines.filter { $0["type"] as? String == "send_id3" }.count == 1)
        #expect(lines.last?["event"] as? Int == 2002)
        let written = try String(contentsOfFile: file, encoding: .utf8)
        #expect(written == run.stdout, "the file holds the same JSON lines")
    }

    @Test func aPlainTransportStreamFileIsMeteredToo() throws {
        let run = try Command.run(["--speed", "max", "--format", "jsonl", Samples.path("spec/v23-184.ts")])
        #expect(run.status == 0)
        let expected = try Samples.expected("spec/v23-184.expected.jsonl").filter(\.nielsen).map(Command.Send.init)
        #expect(run.sends == expected)
    }

    /// The case: 0, 1 or 2 of the 4 tags over 10 runs, when the stop was on the wall clock.
    @Test func maximumSpeedWithADurationLongerThanTheStreamDeliversEveryTagEveryTime() async throws {
        let expected = try Samples.expected("hls/expected.jsonl").filter(\.nielsen).map(\.owner)
        for run in 0..<50 {
            let result = try await offThePool { try Command.run(["--speed", "max", "--duration", "600", "--format", "jsonl",
                                                                   Samples.path("hls/master.m3u8")]) }
            #expect(result.status == 0)
            #expect(result.sends.map(\.payload) == expected, "run \(run)")
        }
    }

    /// `--version` from the one place it is written; completions from the same parser.
    @Test func versionAndCompletions() throws {
        let version = try Command.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout == ID3MeterVersion.current + "\n")
        let bash = try Command.run(["--generate-completion-script", "bash"])
        #expect(bash.status == 0 && bash.stdout.contains("--max-segment-size") && bash.stdout.contains("scan"))
    }
}
