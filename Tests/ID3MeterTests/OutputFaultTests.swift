import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// The outputs under the faults of real operations: a disk that fills and empties again (a real
/// tmpfs), /dev/full, a file a crash left torn, rotation.
@Suite("Outputs under disk faults", .serialized, .timeLimit(.minutes(4)))
struct OutputFaultTests {
    static func endless(seed: UInt64) -> LiveChannel {
        LiveChannel(preroll: 3) { date in
            var stream = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 10, startDate: date)
            stream.seed = seed
            return stream
        }
    }

    static func key(_ record: [String: Any]) -> String {
        "\(record["channel"] as? String ?? "") \((record["pts"] as? NSNumber)?.int64Value ?? -1) \(record["payload"] as? String ?? "")"
    }

    static func sends(_ records: [[String: Any]]) -> [String] {
        records.filter { $0["type"] as? String == "send_id3" }.map(key)
    }

    static func isAlert(_ record: [String: Any], output prefix: String, active: Bool) -> Bool {
        record["alert"] as? String == "output_write_failing" && (record["output"] as? String)?.hasPrefix(prefix) == true
            && record["active"] as? Bool == active
    }

    /// Runs `arguments` (the meter or serve, writing to a small disk), fills the disk once tags
    /// flow, frees it once both outputs on it have said they cannot write, and stops the process
    /// once they have said they can again. Every record on stdout is in the file, whole, once,
    /// and at the collector once; nothing was lost.
    func fillAndFree(_ arguments: (_ disk: URL, _ collector: URL) -> [String], stopWith signal: Int32,
                     metrics: Bool = false) async throws {
        let disk = try SmallDisk(bytes: 1 << 20)
        let collector = try TestCollector()
        defer { collector.server.stop() }
        let (process, out, err) = try Command.launch(arguments(disk.folder, collector.url))
        defer { if process.isRunning { process.terminate() } }
        let api = metrics ? ServeCommandTests.apiAddress(from: err).address : nil
        let reader = RecordReader(out)
        var delivered = 0
        /// Counts deliveries as they are read (the lines themselves are being appended to).
        func sends(_ record: [String: Any]) -> Int {
            if record["type"] as? String == "send_id3" { delivered += 1 }
            return delivered
        }
        /// Reads until both outputs on the disk have said they cannot (`active`) or can write again.
        func awaitAlerts(active: Bool) {
            var said: Set<String> = []
            reader.read { record in
                _ = sends(record)
                for output in ["records file", "collector"] where Self.isAlert(record, output: output, active: active) { said.insert(output) }
                return said.count == 2
            }
        }
        reader.read { sends($0) >= 4 }
        disk.fill()
        awaitAlerts(active: true)
        let whileFull = delivered
        reader.read { sends($0) >= whileFull + 6 }
        if let api {
            let samples = ServeCommandTests.samples(try await ServeCommandTests.request("GET", "\(api)/metrics").body)
            let file = arguments(disk.folder, collector.url).first { $0.hasSuffix("records.jsonl") } ?? ""
            #expect(samples[#"id3meter_output_failing{output="records file \#(file)"}"#] == 1, "\(samples.filter { $0.key.contains("output") })")
            #expect((samples[#"id3meter_output_write_errors_total{output="collector"}"#] ?? 0) > 0)
        }
        disk.free()
        awaitAlerts(active: false)
        let afterwards = delivered
        reader.read { sends($0) >= afterwards + 4 }
        kill(process.processIdentifier, signal)
        reader.read { _ in false }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)

        let text = try String(contentsOf: disk.folder.appendingPathComponent("records.jsonl"), encoding: .utf8)
        let fileRecords = text.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(!fileRecords.isEmpty && fileRecords.allSatisfy { $0 != nil }, "every line of the records file is a whole record")
        #expect(text.hasSuffix("\n"))
        let lines = reader.records
        let stdoutSends = Self.sends(lines)
        #expect(Self.sends(fileRecords.compactMap { $0 }) == stdoutSends, "the file has every delivery, in order, once")
        let collected = collector.batches.values.flatMap { $0 }.filter { $0.payload != nil }
            .map { "\($0.channel ?? "") \($0.pts ?? -1) \($0.payload ?? "")" }
        #expect(collected.count == stdoutSends.count && collected.sorted() == stdoutSends.sorted(), "the collector has every delivery once")
        #expect(!lines.contains { $0["type"] as? String == "loss" }, "nothing had to be dropped")
        #expect(whileFull + 10 <= stdoutSends.count, "metering went on while the disk was full (six sends while full, four after)")
    }

    @Test func theMeterOnAFullDiskKeepsMeteringAndWritesEverythingOnceSpaceReturns() async throws {
        let server = try LiveServer(preroll: 3) { LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 10, startDate: $0) }
        defer { server.stop() }
        try await fillAndFree({ disk, collector in
            [server.url("master.m3u8"), "--format", "jsonl", "--output", disk.appendingPathComponent("records.jsonl").path,
             "--collector", collector.absoluteString, "--spool", disk.appendingPathComponent("spool").path,
             "--state", disk.appendingPathComponent("state").path]
        }, stopWith: SIGINT)
    }

    @Test func serveOnAFullDiskKeepsEveryChannelMeteringAndWritesEverythingOnceSpaceReturns() async throws {
        let server = try LineupServer(["a": Self.endless(seed: 1), "b": Self.endless(seed: 2)])
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try server.writeConfig(in: folder)
        try await fillAndFree({ disk, collector in
            ["serve", config.path, "--listen", "127.0.0.1:0", "--output", disk.appendingPathComponent("records.jsonl").path,
             "--collector", collector.absoluteString, "--spool", disk.appendingPathComponent("spool").path,
             "--state", disk.appendingPathComponent("state").path]
        }, stopWith: SIGTERM, metrics: true)
    }

    static func record(_ index: Int, channel: String? = nil) -> MeterRecord {
        var record = MeterRecord.delivery("www.nielsen.com/\(index)", context: TagContext(pts: Int64(index), origin: TagOrigin(source: "s"),
                                                                                            programDateTime: nil),
                                          at: Date(timeIntervalSince1970: 1_000 + Double(index)))
        record.channel = channel
        return record
    }

    /// The kernel's /dev/full refuses every write with ENOSPC: lines are held in order up to the
    /// bound, the oldest then dropped and counted by channel and time; a descriptor that takes
    /// them again gets what was held, in order, whole.
    @Test func heldLinesAreBoundedCountedAndWrittenInOrderWhenStorageReturns() throws {
        let full = open("/dev/full", O_WRONLY)
        #expect(full >= 0)
        let writer = LineWriter(descriptor: full, name: "test", holdLimit: 1_000)
        for index in 0..<40 {
            let line = Array(#"{"n":\#(index),"pad":"\#(String(repeating: "x", count: 80))"}"#.utf8)
            writer.append(line, sentAt: 1_000 + Double(index), channel: index % 2 == 0 ? "even" : "odd")
        }
        let (changes, loss) = writer.take()
        #expect(changes == [.failing(String(cString: strerror(ENOSPC)))], "one alert, not one per line")
        let held = writer.health.recordsHeld
        #expect(held > 0 && held * 100 <= 1_100)
        #expect(loss.count == 40 - held && writer.health.recordsLost == 40 - held)
        #expect(loss.byChannel["even"]?.from == 1_000 && loss.byChannel["odd"]?.from == 1_001)
        let words = LineWriter.Change.records([], loss: loss, health: writer.health, at: Date())
        #expect(words.count == 2 && words.losses.count == 2 && words.losses.allSatisfy { $0.output == "test" })
        #expect(words.losses.first { $0.channel == "even" }?.records == loss.byChannel["even"]?.count)
        #expect(words.first?.message?.contains("No space left on device") == true, "\(words)")

        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("out.jsonl").path
        let file = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        writer.replaceDescriptor(file)
        writer.retry()
        close(full)
        close(file)
        #expect(writer.take().changes == [.recovered(held)])
        let numbers = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])["n"] as? Int
        }
        #expect(numbers == Array((40 - held)..<40), "the newest records, in order, each once")
    }

    /// A last line without its newline (a crash mid-write) is set aside, not appended to.
    @Test func aTornLastLineIsSetAsideOnStart() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("records.jsonl")
        let torn = #"{"payload":"www.nielsen.com/cut","sent_at":1795000000,"ty"#
        try (#"{"type":"event","sent_at":1,"event":2001}"# + "\n" + torn).write(to: file, atomically: true, encoding: .utf8)
        let result = try Command.run([Samples.path("hls/master.m3u8"), "--speed", "max", "--format", "jsonl", "--output", file.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("ended in a torn line (\(torn.utf8.count) bytes, no newline): set aside as"), "\(result.stderr)")
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
        #expect(Command.Send.records(in: lines.joined(separator: "\n")) == result.sends)
        let aside = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("records.jsonl.torn-") }
        #expect(aside.count == 1)
        #expect(try String(contentsOf: folder.appendingPathComponent(aside[0]), encoding: .utf8) == torn)
    }

    /// `--output-max-size` rotates the file; `--output-keep` keeps the newest rotated files: what
    /// is kept, oldest first, then the current file, is the end of what the meter wrote.
    /// What goes wrong while rotating is said in a warning record to every output, not only kept:
    /// an old "rotated file" that is a folder cannot be removed.
    @Test func aRotationThatCannotRemoveAnOldFileSaysSo() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("records.jsonl")
        let squatter = folder.appendingPathComponent("records.jsonl.19700101T000000Z")
        try FileManager.default.createDirectory(at: squatter, withIntermediateDirectories: false)
        let output = try StreamOutput(appendingTo: file.path, rotation: StreamOutput.Rotation(maximumBytes: 300, keep: 1),
                                      now: { Date(timeIntervalSince1970: 2_000_000_000) })
        let outputs = OutputSet([output])
        for index in 0..<6 { await outputs.write(Self.record(index)) }
        let warnings = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
            .compactMap { try? JSONDecoder().decode(MeterRecord.self, from: Data($0.utf8)) }.warnings
        #expect(warnings.count >= 1)
        #expect(warnings.allSatisfy { $0.contains("cannot remove the rotated file \(squatter.path)") }, "\(warnings)")
        await outputs.finish()
    }

    @Test func rotationKeepsTheNewestFilesWhole() throws {
        // 80 tags, every segment published and the playlist ended: read at full speed.
        let server = try LiveServer(preroll: 100) {
            LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 40, segmentCount: 40, startDate: $0)
        }
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("records.jsonl")
        let result = try Command.run([server.url("master.m3u8"), "--speed", "max", "--format", "jsonl", "--output", file.path,
                                      "--output-max-size", "4K", "--output-keep", "2"])
        #expect(result.status == 0, "\(result.stderr)")
        let rotated = RecordFile.rotatedFiles(of: file.path)
        #expect(rotated.count == 2)
        var kept = ""
        for path in rotated + [file.path] {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.utf8.count <= 4_096 && text.hasSuffix("\n"), "\(path)")
            kept += text
        }
        let written = result.stdout.split(separator: "\n")
        let keptLines = kept.split(separator: "\n")
        #expect(keptLines.count < written.count, "the oldest file was removed")
        #expect(Array(written.suffix(keptLines.count)) == keptLines)
    }

    /// A checkpoint written before a rotation points into the rotated file: the records after it
    /// there, and in the new file, are read back.
    @Test func aCheckpointIntoARotatedFileIsFollowedIntoTheNewOne() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("records.jsonl").path
        let encoder = JSONEncoder()
        func line(_ index: Int) throws -> String {
            var record = Self.record(index)
            if case .delivery(var delivery) = record.content {
                delivery.mediaSequence = index
                record.content = .delivery(delivery)
            }
            return String(decoding: try encoder.encode(record), as: UTF8.self) + "\n"
        }
        try (line(1) + line(2)).write(toFile: path, atomically: false, encoding: .utf8)
        let identity = try #require(StateDirectory.identity(of: path))
        let state = try StateDirectory(directory: folder.appendingPathComponent("state"))
        await state.saveNow(Checkpoint(recordsFile: path, recordsOffset: identity.size, recordsInode: identity.inode))
        try (try line(3)).data(using: .utf8)!.append(toFile: path)
        #expect(rename(path, path + ".20261124T080000Z") == 0)
        try (line(4)).write(toFile: path, atomically: false, encoding: .utf8)
        var recovered = state.recover(recordsFile: path, spool: nil)
        #expect(recovered.notes.isEmpty, "\(recovered.notes)")
        #expect(recovered.points.byChannel[""]?.mediaSequence == 4)
        // Without the new file's record, the rotated file's is the last.
        try "".write(toFile: path, atomically: false, encoding: .utf8)
        recovered = state.recover(recordsFile: path, spool: nil)
        #expect(recovered.points.byChannel[""]?.mediaSequence == 3)
    }
}

extension Data {
    func append(toFile path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: self)
    }
}
