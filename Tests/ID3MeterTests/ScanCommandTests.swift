import Foundation
import Testing

/// The `id3-meter scan` command as a user runs it: exit codes, messages, output formats.
@Suite("id3-meter scan", .timeLimit(.minutes(3)))
struct ScanCommandTests {
    /// libav is loaded when an input needs it (here: the meter probing a file's frame rate), not
    /// at start: glibc's loader names every library it maps when LD_DEBUG=libs.
    @Test func libavIsLoadedOnlyWhenAnInputNeedsIt() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        func loadsLibav(_ arguments: [String]) throws -> Bool {
            // The trace goes to FILE.PID, not into the pipes the test reads.
            let trace = folder.appendingPathComponent(UUID().uuidString)
            let result = try Command.run(arguments, environment: ["LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": trace.path])
            #expect(result.status == 0, "\(arguments): \(result.stderr.suffix(500))")
            let written = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(trace.lastPathComponent) }
            let text = try written.map { try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }.joined()
            #expect(text.contains("calling init: "), "the loader's trace is there to read")
            return text.contains("libavformat.so")
        }
        #expect(try !loadsLibav(["--version"]))
        #expect(try !loadsLibav(["scan", "--quiet", Samples.path("qa/defects.ts")]))
        #expect(try !loadsLibav(["scan", "--quiet", Samples.path("hls/master.m3u8")]))
        #expect(try loadsLibav(["--speed", "max", "--format", "jsonl", Samples.path("qa/defects.ts")]))
    }

    /// Without a usable libav only the inputs that need it fail, each saying why.
    @Test func anInputNeedingAMissingLibavSaysWhy() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The loader takes this empty file for libavformat and refuses it.
        #expect(FileManager.default.createFile(atPath: folder.appendingPathComponent("libavformat.so.59").path, contents: Data()))
        let result = try Command.run(["scan", "--timeout", "1", "udp://127.0.0.1:9", Samples.path("qa/defects.ts")],
                                     environment: ["LD_LIBRARY_PATH": folder.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("udp://127.0.0.1:9: cannot open: Function not implemented (cannot load libavformat.so.59: "), "\(result.stderr)")
        #expect(result.sends.isEmpty && result.stdout.components(separatedBy: "\"type\":\"nielsen\"").count - 1 == 9, "the file is still read")
    }

    func run(_ arguments: [String]) throws -> Command.Result { try Command.run(arguments) }

    func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    /// A usage error leaves the disk as it was: no report truncated, no spool folder or output file made.
    @Test func aUsageErrorWritesNothing() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let report = folder.appendingPathComponent("report.json").path
        try Data("kept".utf8).write(to: URL(fileURLWithPath: report))
        let scan = try run(["scan", "--report", report, "--jobs", "0", Samples.path("spec/standard-60.ts")])
        #expect(scan.status == 2, "\(scan.stderr)")
        #expect(try String(contentsOfFile: report, encoding: .utf8) == "kept")
        let spool = folder.appendingPathComponent("new/spool").path, output = folder.appendingPathComponent("out.jsonl").path
        let meter = try run(["--collector", "http://127.0.0.1:9/", "--spool", spool, "--output", output, "--fps", "0",
                             Samples.path("spec/standard-60.ts")])
        #expect(meter.status == 2, "\(meter.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("new").path))
        #expect(!FileManager.default.fileExists(atPath: output))
        let unwritable = try run(["scan", "--report", "/proc/id3-meter/report.json", Samples.path("spec/standard-60.ts")])
        #expect(unwritable.status == 2 && unwritable.stderr.contains("cannot write --report"), "\(unwritable.stderr)")
    }

    @Test func jsonlRecordsMatchTheGroundTruth() throws {
        let result = try run(["scan", "--format", "jsonl", Samples.path("ts/nielsen.ts")])
        #expect(result.status == 0)
        let records = try jsonLines(result.stdout)
        let expected = try Samples.expected("ts/nielsen.expected.jsonl").filter(\.nielsen)
        #expect(records.map { $0["payload"] as? String } == expected.map(\.owner))
        #expect(records.map { ($0["pts"] as? NSNumber)?.int64Value } == expected.map(\.pts))
        for (record, frame) in zip(records, expected) {
            #expect(abs((record["time"] as? Double ?? -1) - Double(frame.pts) / 90_000) < 1e-9)
        }
        for key in ["source", "pc_cid", "fd_cid", "pc_offset", "fd_offset", "breakout", "valid", "issues"] {
            #expect(records.allSatisfy { $0[key] != nil }, "every record has \(key)")
        }
        let placeholders = expected.filter { $0.owner?.contains("X100zdCIGeIlgZnkYj6UvQ==") == true }.count
        #expect(result.stderr.contains("\(expected.count) Nielsen tags (\(expected.count) valid, 0 invalid, \(placeholders) with placeholder PC CID)"),
                "\(result.stderr)")
    }

    @Test func allListsTheOtherFrames() throws {
        let result = try run(["scan", "--all", "--format", "jsonl", Samples.path("spec/standard-60.ts")])
        let records = try jsonLines(result.stdout)
        let expected = try Samples.expected("spec/standard-60.expected.jsonl")
        #expect(records.map { $0["frame"] as? String ?? "PRIV" } == expected.map(\.id))
        #expect(records.map { ($0["owner"] ?? $0["payload"]) as? String } == expected.map { $0.owner ?? $0.description })
    }

    @Test func csvAndTextFormats() throws {
        let csv = try run(["scan", "--format", "csv", Samples.path("hls/master.m3u8")])
        let rows = csv.stdout.split(separator: "\n")
        #expect(rows.first?.hasPrefix("type,source,segment,media_sequence,pts,time,program_date_time,payload") == true)
        #expect(rows.count == 1 + 4)
        let text = try run(["scan", "--format", "text", Samples.path("hls/master.m3u8")])
        #expect(text.stdout.contains("seg0.ts  nielsen  valid, placeholder PC CID"))
    }

    @Test func unreadableInputsFailWithTheirNameAndTheOthersAreStillScanned() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty.ts").path
        let random = folder.appendingPathComponent("random.ts").path
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        _ = FileManager.default.createFile(atPath: random, contents: Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) }))
        let missing = folder.appendingPathComponent("missing.ts").path
        let noID3 = Samples.path("ts/no-id3.ts")
        let result = try run(["scan", "--format", "jsonl", missing, empty, random, noID3, Samples.path("ts/nielsen.ts")])
        #expect(result.status == 1)
        #expect(try jsonLines(result.stdout).count == 4, "the good input is still scanned")
        for (input, reason) in [(missing, "No such file"), (empty, "it is empty"), (random, "not MPEG-TS")] {
            #expect(result.stderr.split(separator: "\n").contains { $0.contains(" error: \(input): ") && $0.contains(reason) },
                    "stderr names \(input) and says \(reason): \(result.stderr)")
        }
        #expect(result.stderr.split(separator: "\n").contains { $0.contains(" warning: \(noID3): no timed-ID3 stream") }, "\(result.stderr)")
    }

    /// Exit statuses each mean one thing: 0 every input was read (one without timed ID3 is a
    /// warning, and a failed QA check), 1 something could not be read or was skipped as damaged,
    /// 3 a QA check failed under --strict.
    @Test func anInputWithoutTimedID3IsReadAndWarnedAboutNotAnError() throws {
        let noID3 = Samples.path("ts/no-id3.ts")
        let plain = try run(["scan", "--format", "jsonl", noID3])
        #expect(plain.status == 0)
        #expect(plain.stderr.contains("warning: \(noID3): no timed-ID3 stream"), "\(plain.stderr)")
        let strict = try run(["scan", "--strict", "--report", "-", noID3])
        #expect(strict.status == 3)
        #expect(strict.stdout.contains("Checks failed: nielsen_owner_id"), "\(strict.stdout)")
        #expect(strict.stdout.contains("test 25 nielsen_owner_id: Fail <0/1/0>"), "\(strict.stdout)")
        let meter = try run(["--speed", "max", noID3])
        #expect(meter.status == 0, "the meter follows the same rule: \(meter.stderr)")
        #expect(meter.stderr.contains("no timed-ID3 stream"))
    }

    @Test func usageErrorsExit2() throws {
        #expect(try run(["scan"]).status == 2)
        #expect(try run(["scan", "--format", "xml", "x.ts"]).status == 2)
        #expect(try run(["scan", "--variant", "middle", "x.ts"]).status == 2)
        #expect(try run(["scan", "--bogus", "x.ts"]).status == 2)
        let help = try run(["scan", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--variant"))
    }

    /// seg0.ts under several playlists is several places: with more than one input, text rows name theirs.
    @Test func textRowsNameTheirInputWhenThereAreSeveral() throws {
        let one = try run(["scan", "--format", "text", Samples.path("spec/hls/index.m3u8")])
        let two = try run(["scan", "--format", "text", Samples.path("spec/hls/index.m3u8"), Samples.path("hls/master.m3u8")])
        #expect(one.stdout.contains("  part0.ts  nielsen") && !one.stdout.contains(Samples.path("spec/hls/index.m3u8")))
        #expect(two.stdout.contains("  \(Samples.path("spec/hls/index.m3u8")) part0.ts  nielsen"), "\(two.stdout.prefix(400))")
    }
}
