import Foundation
import Testing

/// docs/LIBRARY.md's code is compiled (the package builds its blocks as two programs, in Swift 6
/// language mode) and the core one runs on real bytes.
@Suite("docs/LIBRARY.md compiles", .timeLimit(.minutes(1)))
struct LibraryDocsTests {
    @Test func theProgramsAreTheDocumentsBlocks() throws {
        let status = try Command.runTool("/usr/bin/env", ["python3", Samples.root.appendingPathComponent("scripts/library-docs-examples.py").path,
                                                          "--check"])
        #expect(status == 0, "run `make library-docs` after editing docs/LIBRARY.md")
    }

    /// The core block, fed a TS recording in 64 KB pieces as a store would hand it over, prints
    /// each Nielsen tag with its PTS: those the generator planted.
    @Test func theCoreBlockReadsStoredSegments() throws {
        let program = Command.binary.deletingLastPathComponent().appendingPathComponent("library-docs-core")
        let result = try Command.run([Samples.path("spec/standard-60.ts")], binary: program)
        #expect(result.status == 0, "\(result.stderr)")
        let expected = try Samples.expected("spec/standard-60.expected.jsonl").filter(\.nielsen)
        let printed = result.stdout.split(separator: "\n").filter { $0.contains("www.nielsen.com/") }
        #expect(!expected.isEmpty && printed.count == expected.count, "\(result.stdout)")
        #expect(zip(printed, expected).allSatisfy { line, frame in line.hasPrefix("\(frame.pts) \(frame.owner ?? "")") }, "\(printed.prefix(2))")
    }
}
