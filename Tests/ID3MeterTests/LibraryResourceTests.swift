import Foundation
import Testing

/// What the library leaves to its host: its stderr, its threads, its sockets.
@Suite("What a library user owns", .timeLimit(.minutes(2)))
struct LibraryResourceTests {
    static let example = Command.binary.deletingLastPathComponent().appendingPathComponent("custom-engine-example")

    /// libav writes "[tcp @ 0x...] Connection to tcp://... failed" to stderr through its default
    /// log callback; a program that never heard of `LibAVLog` must not get it, and the failure it
    /// is told of still has libav's reason.
    @Test func libavPrintsNothingUnlessAskedAndItsReasonReachesTheFailure() throws {
        let result = try Command.run(["tcp://127.0.0.1:9"], binary: Self.example)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("tcp @") && !result.stderr.contains("Connection to"), "\(result.stderr)")
        #expect(result.stdout.contains("error: tcp://127.0.0.1:9: cannot open: ") && result.stdout.contains("Connection refused"),
                "\(result.stdout)")
    }
}
