import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// A big MPEG-TS file read in blocks on several threads must give the events of one pass, byte
/// for byte, wherever the block edges fall: inside PES packets and tags, across program table
/// changes, lost sync and continuity errors. Small blocks make many edges in a small file.
@Suite("Big files read in blocks", .timeLimit(.minutes(3)))
struct BlockwiseFileScanTests {
    /// What a scan says of an input, as text: every record (all frames), failure and warning.
    static func said(_ events: [MediaEvent]) -> [String] {
        events.flatMap { event -> [String] in
            switch event {
            case .tag, .malformed: TagRecord.all(for: event, allFrames: true).map(\.json)
            case .failure(let failure): ["failure: \(failure.description)"]
            case .warning(let warning): ["warning: \(warning.description)"]
            default: []
            }
        }
    }

    static func onePass(_ path: String) async -> [MediaEvent] { await Samples.scan(path) }

    /// `size`: what the scan takes the file's size to be (the size it had when the scan began).
    static func inBlocks(_ path: String, blockSize: Int, overlaps: [Int], workers: Int = 2, maximumEvents: Int = 65_536,
                         size: Int? = nil) async throws -> (events: [MediaEvent], outcome: BlockwiseFileScan.Outcome) {
        let actualSize = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let size = size ?? actualSize
        let prefix = Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(StreamProbe.prefixBytes))
        let first = try #require(TransportStreamSync.offset(in: prefix))
        var extractor = MediaExtractor(origin: TagOrigin(source: path))
        var events: [MediaEvent] = []
        prefix.withUnsafeBufferPointer { extractor.feed($0) { events.append($0) } }
        var scan = BlockwiseFileScan(input: path, workers: workers, progress: nil)
        scan.overlaps = overlaps
        scan.maximumEvents = maximumEvents
        let boundaries = BlockwiseFileScan.boundaries(size: size, firstPacket: first, read: prefix.count, blockSize: blockSize)
        let outcome = await scan.run(boundaries: boundaries,
                                     extractor: &extractor, alreadyRead: prefix.count) { events.append($0) }
        return (events, outcome)
    }

    static func denseFile(segments: Int) throws -> (path: String, tags: Int, folder: URL) {
        let folder = try Samples.temporaryFolder()
        let path = folder.appendingPathComponent("dense.ts").path
        let result = try Command.run(["dense-corpus", path, "--segments", "\(segments)"], binary: Command.sampleGenerator)
        try #require(result.status == 0, "\(result.stderr)")
        return (path, Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1, folder)
    }

    @Test func blockEdgesInsideTagsGiveTheEventsOfOnePass() async throws {
        let (path, tags, folder) = try Self.denseFile(segments: 120)
        defer { try? FileManager.default.removeItem(at: folder) }
        let expected = Self.said(await Self.onePass(path))
        #expect(expected.filter { $0.contains("\"type\":\"nielsen\"") }.count == tags)
        // Blocks of 37 packets and a bit: edges fall in every position of the tags' PES packets.
        // An overlap of two of this stream's 10 s segments (64 kbit/s, a tag a second, program
        // tables at the start of each segment) sees the tables and the last tag before each block.
        let (events, outcome) = try await Self.inBlocks(path, blockSize: 37 * 188 + 100, overlaps: [1_300 * 188])
        #expect(Self.said(events) == expected)
        #expect(outcome.taken > 1_500 && outcome.readAgain == 0, "blocks were taken as their threads read them: \(outcome)")
        // One thread (every block taken by its reader), and more threads than cores (blocks
        // left for whichever thread passes on the block before them).
        for workers in [1, 4] {
            let (events, outcome) = try await Self.inBlocks(path, blockSize: 37 * 188 + 100, overlaps: [1_300 * 188], workers: workers)
            #expect(Self.said(events) == expected, "\(workers) threads")
            #expect(outcome.readAgain == 0, "\(workers) threads: \(outcome)")
        }
        // Blocks holding more events than they may keep waiting are read again in order.
        let (capped, cappedOutcome) = try await Self.inBlocks(path, blockSize: 700 * 188, overlaps: [1_300 * 188], maximumEvents: 11)
        #expect(Self.said(capped) == expected)
        #expect(cappedOutcome.taken > 0 && cappedOutcome.readAgain > 0, "\(cappedOutcome)")
        // An overlap shorter than the time between tags: some blocks are read again, the events the same.
        let (short, mixed) = try await Self.inBlocks(path, blockSize: 37 * 188 + 100, overlaps: [30 * 188])
        #expect(Self.said(short) == expected)
        #expect(mixed.taken > 0 && mixed.readAgain > 0, "\(mixed)")
        // That short overlap first, the long one where it has not settled: every block taken.
        let (twoStep, twoStepOutcome) = try await Self.inBlocks(path, blockSize: 37 * 188 + 100, overlaps: [30 * 188, 1_300 * 188])
        #expect(Self.said(twoStep) == expected)
        #expect(twoStepOutcome.taken > 1_500 && twoStepOutcome.readAgain == 0, "\(twoStepOutcome)")
        // An overlap too short to have seen the program tables: every block is read again, in order.
        let (again, reread) = try await Self.inBlocks(path, blockSize: 64 * 188, overlaps: [188])
        #expect(Self.said(again) == expected)
        #expect(reread.taken == 0 && reread.readAgain > 100, "\(reread)")
    }

    /// A file that ends before the size the scan began with (cut while it was read): every event
    /// of the bytes there, then one failure naming the input and how far it was read; the blocks
    /// past the end are not waited for.
    @Test func aFileCutShortGivesItsEventsThenOneReadError() async throws {
        let (path, _, folder) = try Self.denseFile(segments: 60)
        defer { try? FileManager.default.removeItem(at: folder) }
        let actualSize = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let expected = Self.said(await Self.onePass(path))
        let blockSize = 53 * 188
        for workers in [1, 3] {
            let (events, _) = try await Self.inBlocks(path, blockSize: blockSize, overlaps: [1_300 * 188], workers: workers,
                                                      size: actualSize + 5 * blockSize)
            let said = Self.said(events)
            #expect(Array(said.dropLast()) == expected, "\(workers) threads")
            let failure = try #require(said.last)
            #expect(failure.hasPrefix("failure:") && failure.contains(path) && failure.contains("read error after \(actualSize) bytes"),
                    "\(failure)")
        }
    }

    /// Samples of different programs back to back (tables change, counters jump, times jump),
    /// with bytes of no packet between some of them (sync lost and found): two packets' worth,
    /// which keeps the packet grid, and near the end an odd number, which moves it.
    @Test func changedTablesLostSyncAndBrokenCountersGiveTheEventsOfOnePass() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var bytes = Data()
        let parts = ["ts/nielsen.ts", "qa/defects.ts", "spec/unsync-60.ts", "lenient/garbage.ts", "ts/nielsen-v23.ts", "quirks/quirks.ts"]
        for (index, part) in (parts + parts).enumerated() {
            bytes += try Data(contentsOf: URL(fileURLWithPath: Samples.path(part)))
            if index % 3 == 1 { bytes += Data((0..<(index < 9 ? 2 * 188 : 97)).map { UInt8(truncatingIfNeeded: $0 % 71) }) }
        }
        let path = folder.appendingPathComponent("mixed.ts").path
        try bytes.write(to: URL(fileURLWithPath: path))
        let expected = Self.said(await Self.onePass(path))
        #expect(expected.contains { $0.hasPrefix("warning:") || $0.hasPrefix("failure:") }, "the file is damaged: \(expected.count) lines")
        var all = BlockwiseFileScan.Outcome()
        for blockSize in [50_000, 211 * 188, 1 << 20] {
            let (events, outcome) = try await Self.inBlocks(path, blockSize: blockSize, overlaps: [100 * 188, 3_000 * 188])
            #expect(Self.said(events) == expected, "blocks of \(blockSize) bytes: \(outcome)")
            all.taken += outcome.taken
            all.readAgain += outcome.readAgain
        }
        #expect(all.taken > 10 && all.readAgain > 10, "both ways were taken: \(all)")
    }

    /// The command line reads a big file in blocks when it is the only input (and cores are to
    /// spare), and writes what it writes reading it in one pass.
    @Test(.timeLimit(.minutes(3)))
    func theCommandWritesTheSameInBlocks() async throws {
        let (path, tags, folder) = try Self.denseFile(segments: 1_300)
        defer { try? FileManager.default.removeItem(at: folder) }
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0 >= BlockwiseFileScan.minimumSize)
        // What the batch asks before it reads an input in blocks (and collects each block's
        // events where it was read): only a big local MPEG-TS file, only with threads to spare.
        #expect(TagScanner().readingBlocks(with: 2).readsInBlocks(path))
        #expect(!TagScanner().readsInBlocks(path))
        #expect(!TagScanner().readingBlocks(with: 2).readsInBlocks(Samples.path("ts/nielsen.ts")))
        let notTransportStream = folder.appendingPathComponent("zeros.ts").path
        try Data(count: BlockwiseFileScan.minimumSize + 1).write(to: URL(fileURLWithPath: notTransportStream))
        #expect(!TagScanner().readingBlocks(with: 2).readsInBlocks(notTransportStream))
        let reports = (1...2).map { folder.appendingPathComponent("report-\($0).json").path }
        let onePass = try await offThePool { try Command.run(["scan", "--jobs", "1", "--format", "jsonl", "--report", reports[0], path]) }
        let inBlocks = try await offThePool { try Command.run(["scan", "--jobs", "2", "--format", "jsonl", "--report", reports[1], path]) }
        #expect(onePass.status == 0 && inBlocks.status == 0)
        #expect(onePass.stdout.components(separatedBy: "\"type\":\"nielsen\"").count - 1 == tags)
        #expect(inBlocks.stdout == onePass.stdout)
        #expect(inBlocks.stderr == onePass.stderr)
        #expect(try Data(contentsOf: URL(fileURLWithPath: reports[1])) == Data(contentsOf: URL(fileURLWithPath: reports[0])))
    }
}
