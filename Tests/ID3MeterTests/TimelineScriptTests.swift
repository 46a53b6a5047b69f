import Foundation
import Testing
@testable import ID3MeterReport

/// The timeline pages' script is a .js file, checked as one, and carried in the binary as the
/// Swift string generated from it.
@Suite("The timeline script", .timeLimit(.minutes(1)))
struct TimelineScriptTests {
    static let file = Samples.root.appendingPathComponent("Sources/ID3MeterReport/HTML/timeline.js")

    @Test func theBinaryCarriesTimelineJSAsItIs() throws {
        let text = try String(contentsOf: Self.file, encoding: .utf8)
        #expect(TimelineScript.source + "\n" == text, "run `make timeline-script` after editing timeline.js")
    }

    /// `node --check` parses it as a script, without running it: a syntax error fails here, not
    /// only in the browser tests.
    @Test func nodeParsesIt() throws {
        let node = try #require(["/usr/bin/node", "/usr/local/bin/node"].first { FileManager.default.isExecutableFile(atPath: $0) },
                                "make test installs nodejs")
        #expect(try Command.runTool(node, ["--check", Self.file.path]).status == 0)
        // And the check can fail: a script with a syntax error is refused.
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID().uuidString).js")
        try Data("const x = ;\n".utf8).write(to: broken)
        defer { try? FileManager.default.removeItem(at: broken) }
        #expect(try Command.runTool(node, ["--check", broken.path]).status != 0)
    }
}
