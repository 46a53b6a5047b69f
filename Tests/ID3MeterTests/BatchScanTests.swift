import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore

@Suite("Batch scan", .timeLimit(.minutes(3)))
struct BatchScanTests {
    static let inputs = ["ts/nielsen.ts", "spec/unsync-60.ts", "hls/master.m3u8", "spec/v23-184.ts", "qa/defects.ts",
                         "spec/hls/index.m3u8", "ts/nielsen-v23.ts", "spec/standard-60.ts"].map(Samples.path)

    @Test func parallelOutputIsInInputOrderWhateverTheJobs() throws {
        let one = try Command.run(["scan", "--jobs", "1", "--format", "jsonl"] + Self.inputs)
        let four = try Command.run(["scan", "--jobs", "4", "--format", "jsonl"] + Self.inputs)
        #expect(one.status == 0 && four.status == 0)
        #expect(one.stdout == four.stdout)
        // Input order, then stream order: the same as scanning each input alone, one after another.
        let alone = try Self.inputs.map { try Command.run(["scan", "--format", "jsonl", $0]).stdout }.joined()
        #expect(four.stdout == alone)
        let unordered = try Command.run(["scan", "--jobs", "4", "--unordered", "--format", "jsonl"] + Self.inputs)
        #expect(unordered.stdout.split(separator: "\n").sorted() == alone.split(separator: "\n").sorted())
    }

    @Test func inputsListedOnStandardInput() async throws {
        let listed = "# a comment\n\n" + Self.inputs.prefix(3).joined(separator: "\n") + "\n"
        let expansion = await InputExpansion.expand(["-", Self.inputs[3]], scanner: TagScanner()) { listed }
        #expect(expansion.inputs == Array(Self.inputs.prefix(4)))
        #expect(expansion.failures.isEmpty)
    }

    @Test func quotedGlobs() async throws {
        let expansion = await InputExpansion.expand([Samples.path("spec/*.ts"), Samples.path("nothing/*.ts")], scanner: TagScanner())
        #expect(expansion.inputs == ["standard-60.ts", "unsync-60.ts", "v23-184.ts"].map { Samples.path("spec/\($0)") })
        #expect(expansion.failures.map(\.source) == [Samples.path("nothing/*.ts")])
        #expect(expansion.failures.allSatisfy { if case .noMatch = $0.kind { true } else { false } })
    }

    /// Keeps the events, for tests.
    struct EventCollector: ScanCollector {
        var events: [MediaEvent] = []
        mutating func add(_ event: MediaEvent) { events.append(event) }
        func finish() -> [MediaEvent] { events }
    }

    @Test func oneBadInputNeverStopsTheBatch() async throws {
        let inputs = [Self.inputs[0], "/nonexistent.ts", Self.inputs[1]]
        var results: [(Int, [MediaEvent])] = []
        await BatchScan(scanner: TagScanner(), jobs: 2).run(inputs.map { ScanInput($0) }) { _, _ in EventCollector() } deliver: { results.append(($0, $1)) }
        #expect(results.map(\.0) == [0, 1, 2])
        #expect(results[1].1.failures.map(\.source) == ["/nonexistent.ts"])
        #expect(results[0].1.tags.count == 9)
        #expect(results[2].1.frames() == (try Samples.expected("spec/unsync-60.expected.jsonl")).map(FoundFrame.init))
    }

    @Test func strictExitCodesAndTheReportFile() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let reportFile = folder.appendingPathComponent("qa.json").path
        let failing = try Command.run(["scan", "--strict", "--quiet", "--report", reportFile, Samples.path("qa/defects.ts")])
        #expect(failing.status == 3)
        #expect(failing.stderr.isEmpty)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportFile))) as? [String: Any]
        #expect((json?["failed_checks"] as? [String: Any])?.keys.sorted() == ["breakout", "duplicates"])
        // Its two spacing errors pass under the guide's tolerance of 7; set to 1, they fail.
        let tight = try Command.run(["scan", "--strict", "--quiet", "--tolerance", "tag_duration=1", "--report", "-", Samples.path("qa/defects.ts")])
        #expect(tight.status == 3 && tight.stdout.contains("test 5 tag_duration: Fail <2/0/1>"), "\(tight.stdout)")
        for wrong in ["tag_duration", "no_such_check=1", "tag_duration=-1", "tag_duration=x"] {
            let refused = try Command.run(["scan", "--tolerance", wrong, Samples.path("qa/defects.ts")])
            #expect(refused.status == 2 && refused.stderr.contains("--tolerance \(wrong)"), "\(wrong): \(refused.stderr)")
        }
        #expect(try Command.run(["scan", "--strict", "--quiet", Samples.path("qa/defects.ts")]).status == 3, "with no report to write too")
        #expect(try Command.run(["scan", "--strict", Samples.path("spec/standard-60.ts")]).status == 0)
        #expect(try Command.run(["scan", Samples.path("qa/defects.ts")]).status == 0, "without --strict, findings are not failures")
        #expect(try Command.run(["scan", "--strict", "/nonexistent.ts", Samples.path("spec/standard-60.ts")]).status == 3)
        #expect(try Command.run(["scan", "/nonexistent.ts", Samples.path("spec/standard-60.ts")]).status == 1)
        let toStdout = try Command.run(["scan", "--report", "-", Samples.path("qa/defects.ts")])
        #expect(toStdout.stdout.hasPrefix("Nielsen ID3 tag QA report"), "with --report -, stdout holds the report only")
        #expect(try Command.run(["scan", "--jobs", "0", "x.ts"]).status == 2)
    }
}
