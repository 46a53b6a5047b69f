import Foundation
import Testing

/// Every sample through every output (scan as JSON lines, CSV and text, the scan's JSON report,
/// the meter's records at full speed), byte for byte as the binary before the speed work of
/// issue 15 wrote them (`Snapshots/outputs.txt`, recorded with commit 2702360's release build).
/// Speed-ups rewrite how records, reports and tags are made; this says they changed nothing a
/// user sees. Send times and log clock times are masked: they are the only things that differ
/// from run to run.
///
/// To record again, on purpose, with a given binary:
/// `ID3METER_RECORD_OUTPUTS=/path/to/id3-meter swift test --filter OutputSnapshotTests`.
@Suite("Outputs unchanged on every sample")
struct OutputSnapshotTests {
    static let modes: [[String]] = [
        ["scan", "--format", "jsonl"], ["scan", "--format", "csv"], ["scan", "--format", "text"],
        ["scan", "--report", "-", "--format", "jsonl"], ["--speed", "max", "--format", "jsonl"],
    ]
    static let snapshot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Snapshots/outputs.txt")

    /// Every input the samples hold, as a path relative to the package (outputs name their input).
    static func inputs() throws -> [String] {
        let forms: Set<String> = ["ts", "m3u8", "aac", "mp3", "ac3", "ec3", "m4s", "mp4", "mpd"]
        // DASH samples through their MPDs only: their segments are the MPDs' (DASHSampleTests reads them).
        let files = FileManager.default.enumerator(at: Samples.folder, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { url in
                forms.contains(url.pathExtension) && (!url.path.contains("/samples/dash/") || url.pathExtension == "mpd")
            } ?? []
        let root = Samples.root.standardizedFileURL.path + "/"
        return files.map { String($0.standardizedFileURL.path.dropFirst(root.count)) }.sorted()
    }

    /// One run's section of the snapshot: what it printed on each stream and how it ended.
    static func section(_ arguments: [String], _ result: Command.Result) -> String {
        func masked(_ text: String) -> String {
            text.replacing(#/"sent_at":[0-9.]+/#, with: "\"sent_at\":_")
                .replacing(#/(?m)^[0-9:.]{12} /#, with: "_ ")
        }
        return "=== \(arguments.joined(separator: " "))\n--- stdout\n\(masked(result.stdout))\n--- stderr\n"
            + "\(masked(result.stderr))\n--- exit \(result.status)\n"
    }

    static func outputs(of binary: URL) async throws -> String {
        let runs = try inputs().flatMap { input in modes.map { $0 + [input] } }
        var sections = [String](repeating: "", count: runs.count)
        try await withThrowingTaskGroup(of: (Int, String).self) { group in
            var next = 0
            func start() {
                let index = next, arguments = runs[index]
                next += 1
                group.addTask {
                    (index, section(arguments, try await offThePool { try Command.run(arguments, in: Samples.root, binary: binary) }))
                }
            }
            while next < min(2, runs.count) { start() }
            for try await (index, section) in group {
                sections[index] = section
                if next < runs.count { start() }
            }
        }
        return sections.joined()
    }

    @Test(.timeLimit(.minutes(5)))
    func everySampleIsWrittenAsBefore() async throws {
        if let recorder = ProcessInfo.processInfo.environment["ID3METER_RECORD_OUTPUTS"] {
            let recorded = try await Self.outputs(of: URL(fileURLWithPath: recorder))
            try FileManager.default.createDirectory(at: Self.snapshot.deletingLastPathComponent(), withIntermediateDirectories: true)
            try recorded.write(to: Self.snapshot, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: Self.snapshot, encoding: .utf8)
        let actual = try await Self.outputs(of: Command.binary)
        let before = expected.components(separatedBy: "=== ").dropFirst(), now = actual.components(separatedBy: "=== ").dropFirst()
        #expect(now.count == before.count, "runs: \(now.count), snapshot: \(before.count)")
        #expect(now.count >= 5 * 60, "every sample in every mode")
        for (was, run) in zip(before, now) where was != run {
            Issue.record("output changed:\n=== \(was.prefix(4000))\nnow:\n=== \(run.prefix(4000))")
        }
    }
}
