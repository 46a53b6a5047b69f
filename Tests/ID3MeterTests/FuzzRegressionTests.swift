import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore

/// Every input in fuzz/regressions (fuzzer findings once fixed, and hand-made edge cases) goes
/// through the fuzz harness's own replayer: none may crash it.
@Suite("Fuzz regressions", .timeLimit(.minutes(3)))
struct FuzzRegressionTests {
    static let folder = Samples.root.appendingPathComponent("fuzz/regressions")
    static let replayer = Command.binary.deletingLastPathComponent().appendingPathComponent("id3-meter-fuzz")

    @Test(arguments: ["id3", "nielsen", "playlist", "reference", "steering", "packed", "options", "ts", "segments", "mpd", "cookies", "inflate", "assetlist", "records", "hours"])
    func replayWithoutACrash(target: String) throws {
        let inputs = try FileManager.default.contentsOfDirectory(atPath: Self.folder.appendingPathComponent(target).path)
            .sorted().map { Self.folder.appendingPathComponent("\(target)/\($0)").path }
        #expect(!inputs.isEmpty)
        let process = Process()
        process.executableURL = Self.replayer
        process.arguments = inputs
        process.environment = ["FUZZ_TARGET": target]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = Pipe()
        try process.run()
        Command.watch(process)
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(output == "\(target): \(inputs.count) inputs replayed\n")
    }

    @Test func sequenceNumbersAndDurationsThatWouldOverflowAreErrors() {
        for text in ["#EXTM3U\n#EXT-X-MEDIA-SEQUENCE:9223372036854775807\n", "#EXTM3U\n#EXT-X-DISCONTINUITY-SEQUENCE:-1\n",
                     "#EXTM3U\n#EXT-X-TARGETDURATION:1e308\n", "#EXTM3U\n#EXTINF:nan,\na.ts\n", "#EXTM3U\n#EXTINF:-5,\na.ts\n"] {
            #expect(throws: PlaylistError.self, "\(text)") { try PlaylistParser.parse(text, location: "p.m3u8") }
        }
    }
}
