import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SampleGenerator

/// A line-up whose channels all fail does not flood the log: each channel says its failure and
/// the reason once (not at every retry), and past 100 lines a minute the rest are counted, the
/// count said in one line.
@Suite("serve's channel log", .serialized, .timeLimit(.minutes(2)))
struct ChannelLogTests {
    @Test func threeHundredFailingChannelsWriteAtMostTheBudgetAndSayWhatWasHeldBack() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("lineup.yaml")
        // Nothing listens on port 9: every channel's playlist is refused, and retried at 1, 3, 7 s.
        let channels = (0..<300).map { "  - {name: c\($0), url: \"http://127.0.0.1:9/c\($0).m3u8\"}" }
        try ("channels:\n" + channels.joined(separator: "\n") + "\n").write(to: config, atomically: true, encoding: .utf8)
        let (process, out, err) = try Command.launch(["serve", config.path, "--listen", "127.0.0.1:0"])
        defer { if process.isRunning { process.terminate() } }
        // The records (a startup and a shutdown a failed attempt) are read as they come, or serve would wait on the pipe.
        DispatchQueue.global().async { _ = out.fileHandleForReading.readDataToEndOfFile() }
        let (address, early) = ServeCommandTests.apiAddress(from: err)
        let api = try #require(address)
        // Until every channel has failed four times (at 0, 1, 3 and 7 s).
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, try APIAccessTests.request("GET", "\(api)/channels").body.components(separatedBy: #""restarts":4"#).count <= 300 {
            usleep(250_000)
        }
        #expect(Date() < deadline, "every channel failed four times")
        process.terminate()
        let log = early + String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        let failures = log.split(separator: "\n").filter { $0.contains("its stream could not be opened") }
        let held = log.firstMatch(of: /([0-9]+) channel log lines held back in the last minute \(more than 100 a minute\)/)
            .flatMap { Int($0.output.1) }
        print("channel log: \(failures.count) failure lines, \(held ?? 0) held back, \(log.split(separator: "\n").count) lines in all")
        #expect(failures.count == 100, "the budget: \(failures.count)")
        #expect(held == 200, "each channel's failure once, written or counted: \(String(describing: held))")
        #expect(failures.allSatisfy { $0.contains("127.0.0.1:9") && $0.contains("refused") }, "\(failures.prefix(2))")
    }
}
