import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
@testable import ID3MeterServe

/// docs/records.schema.json documents every field scan and meter records can have; real output
/// of every record kind is checked against it by an independent validator (python3-jsonschema,
/// scripts/check-records.py), so a field added without being documented fails here.
@Suite("Record schema", .serialized, .timeLimit(.minutes(2)))
struct RecordSchemaTests {
    static let checker = Samples.root.appendingPathComponent("scripts/check-records.py").path

    /// The validator's verdict on `lines`: its exit status and the record types it passed.
    static func check(_ lines: String) throws -> (status: Int32, types: Set<String>, said: String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("records-\(UUID().uuidString).jsonl")
        try Data(lines.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try Command.run([Self.checker, file.path], binary: URL(fileURLWithPath: "/usr/bin/python3"))
        let counts = result.stdout.split(separator: "\n").last?.split(separator: " ") ?? []
        return (result.status, Set(counts.compactMap { $0.split(separator: "=").first.map(String.init) }), result.stdout + result.stderr)
    }

    @Test func scanRecordsOfEveryKindFollowTheSchema() throws {
        let scan = try Command.run(["scan", "--all", "--format", "jsonl", Samples.path("spec/standard-60.ts"),
                                    Samples.path("quirks/hls/seg0.ts"), Samples.path("fmp4/index.m3u8"), Samples.path("byterange/fmp4.m3u8"),
                                    Samples.path("dash/periods/manifest.mpd")])
        #expect(scan.stdout.contains(#""period":"p1""#) && scan.stdout.contains(#""representation":"1""#))
        let checked = try Self.check(scan.stdout)
        #expect(checked.status == 0, "\(checked.said)")
        #expect(checked.types == ["nielsen", "frame", "malformed"])
    }

    /// The meter's deliveries and events from a run, and every other kind as the library makes
    /// and writes it: a warning, a line-up change, a resumption, and an output on a full disk
    /// (/dev/full) raising its alert and, at the end, its loss, heard by the records file.
    @Test func meterRecordsOfEveryKindFollowTheSchema() async throws {
        let run = try Command.run(["--speed", "max", "--format", "jsonl", Samples.path("hls/master.m3u8")])
        #expect(run.status == 0, "\(run.stderr)")
        let dash = try Command.run(["--speed", "max", "--format", "jsonl", Samples.path("dash/periods/manifest.mpd")])
        #expect(dash.status == 0 && dash.stdout.contains(#""segment_time":"#), "\(dash.stderr)")
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("records.jsonl")
        let outputs = OutputSet([try StreamOutput(appendingTo: "/dev/full"), try StreamOutput(appendingTo: file.path)])
        let now = Date()
        let point = ResumePoint(input: "http://h/live.m3u8", mediaSequence: 7, pts: 100, payload: "www.nielsen.com/x", sentAt: 0)
        for record in [MeterRecord.warning("the media sequence went back", channel: "news", at: now),
                       ConfigChange(action: "add", channel: "news", by: "ops", old: nil, new: "http://h/live.m3u8").record(at: now),
                       .resume(.atLiveEdge(lost: 8...9, seconds: 12), from: point, at: now)] {
            await outputs.write(record)
        }
        await outputs.finish()
        let checked = try Self.check(run.stdout + dash.stdout + (try String(contentsOf: file, encoding: .utf8)))
        #expect(checked.status == 0, "\(checked.said)")
        #expect(checked.types == ["send_id3", "event", "warning", "config_change", "resume", "alert", "loss"])
    }

    /// The schema can fail: a field it does not name, and the meter's old `seq`, are refused.
    @Test func anUndocumentedFieldFails() throws {
        #expect(try Self.check(#"{"type":"send_id3","sent_at":1,"media_sequence":3}"#).status == 0)
        #expect(try Self.check(#"{"type":"send_id3","sent_at":1,"seq":3}"#).status != 0)
        #expect(try Self.check(#"{"type":"nielsen","source":"s","colour":"red"}"#).status != 0)
    }
}
