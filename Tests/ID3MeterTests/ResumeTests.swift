import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// Where a source restarted from a checkpoint picks up, on playlists scripted by hand.
@Suite("Resume: where a restarted source picks up", .serialized, .timeLimit(.minutes(2)))
struct ResumePickUpTests {
    /// A stream of 1 s segments with two tags each, and the checkpoint of its segment 3's first tag.
    static let stream = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 6)

    static func point(segment: Int, tag: Int, input: String) -> ResumePoint {
        let tag = stream.tags(inSegment: segment)[tag]
        return ResumePoint(input: input, mediaSequence: segment, pts: tag.pts, payload: tag.owner, sentAt: 1)
    }

    /// Meters `playlists` (by load) from `point` with no waiting: what the engine got, and how it resumed.
    static func meter(_ playlists: @escaping @Sendable (Int) -> String, resumingAt segment: Int, tag: Int)
        async throws -> (sends: [String], resumed: [Resumption], segments: [String]) {
        let server = try ScriptedPlaylistServer.start(stream: stream, playlist: playlists)
        defer { server.stop() }
        let input = server.url("live.m3u8")
        let engine = ClockedEngine(clock: InstantClock())
        var resumed: [Resumption] = []
        let meter = StreamMeter(input: input, session: MeteringSession(channelName: "c"), pace: .noWaiting,
                                resume: point(segment: segment, tag: tag, input: input))
        for await event in meter.events(engine: engine).caught({ .read(.failure($0)) }) {
            if case .read(.resumed(let resumption)) = event { resumed.append(resumption) }
        }
        return (engine.sends.map(\.payload), resumed, server.requests.map(\.path).filter { $0.hasSuffix(".ts") })
    }

    static func owners(_ segments: ClosedRange<Int>) -> [String] { segments.flatMap { stream.tags(inSegment: $0).map(\.owner) } }

    @Test func aSegmentStillListedIsReplayedWithoutWhatWasDelivered() async throws {
        let run = try await Self.meter({ _ in ScriptedPlaylistServer.playlist(0...5, ended: true) }, resumingAt: 3, tag: 0)
        #expect(run.resumed == [.atSegment(3)])
        #expect(run.segments == ["seg3.ts", "seg4.ts", "seg5.ts"])
        #expect(run.sends == [Self.stream.tags(inSegment: 3)[1].owner] + Self.owners(4...5))
    }

    @Test func aSegmentThatLeftTheWindowJoinsTheEdgeAndCountsWhatWasLost() async throws {
        // Segments 5...12 were never read: 10...12 are listed (1 s each), 5...9 are not
        // (target duration 1 s each).
        let run = try await Self.meter({ load in
            ScriptedPlaylistServer.playlist(10...15, ended: false) + (load > 1 ? "#EXT-X-ENDLIST\n" : "")
        }, resumingAt: 4, tag: 1)
        #expect(run.resumed == [.atLiveEdge(lost: 5...12, seconds: 8)])
        #expect(run.sends == Self.owners(13...15))
    }

    @Test func aPlaylistWhoseSequenceWentBackIsJoinedAtTheEdge() async throws {
        let run = try await Self.meter({ load in
            ScriptedPlaylistServer.playlist(0...5, ended: false) + (load > 1 ? "#EXT-X-ENDLIST\n" : "")
        }, resumingAt: 40, tag: 0)
        #expect(run.resumed == [.sequenceWentBack(to: 3)])
        #expect(run.sends == Self.owners(3...5))
    }

    @Test func theCheckpointsSecondPayloadOfOneTagIsHeldBackToo() async {
        let clock = InstantClock()
        let inner = ClockedEngine(clock: clock)
        let engine = ResumingEngine(inner, resumingAfter: ResumePoint(input: "x", mediaSequence: 7, pts: 100, payload: "b", sentAt: 0))
        func context(_ sequence: Int, _ pts: Int64) -> TagContext {
            TagContext(pts: pts, origin: TagOrigin(source: "x", segment: TagOrigin.Segment(uri: "s", mediaSequence: sequence)),
                       programDateTime: nil)
        }
        for (payload, sequence, pts) in [("z", 6, 50), ("a", 7, 100), ("b", 7, 100), ("c", 7, 100), ("d", 7, 200), ("e", 8, 10)] {
            await engine.sendID3(payload, context: context(sequence, Int64(pts)))
        }
        #expect(inner.sends.map(\.payload) == ["c", "d", "e"])
    }
}

/// The `--state` folder: what it recovers, and what it refuses to trust.
@Suite("Resume: the state folder", .serialized, .timeLimit(.minutes(2)))
struct StateDirectoryTests {
    static func line(channel: String?, seq: Int, payload: String, at: Double) -> String {
        let segment = TagOrigin.Segment(uri: "s\(seq).ts", mediaSequence: seq)
        var record = MeterRecord.delivery(payload, context: TagContext(pts: Int64(seq * 10), origin: TagOrigin(source: "http://h/\(channel ?? "x").m3u8", segment: segment),
                                                                      programDateTime: nil), at: Date(timeIntervalSince1970: at))
        record.channel = channel
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try! encoder.encode(record), as: UTF8.self) + "\n"
    }

    @Test func theRecordsAfterTheCheckpointAndInTheSpoolAreReadBack() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let records = folder.appendingPathComponent("records.jsonl")
        let spool = folder.appendingPathComponent("spool")
        try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true)
        let state = try StateDirectory(directory: folder.appendingPathComponent("state"))
        let checkpoint = CheckpointOutput(state: state, recovered: ResumePoints(), recordsFile: records.path, interval: 3_600)
        let file = try StreamOutput(appendingTo: records.path)
        // a:1 and b:1 are checkpointed (the first write saves at once); a:2 is only in the file,
        // b:2 only in a spool batch, b:3 in the spool's open file, then a line cut short.
        for line in [Self.line(channel: "a", seq: 1, payload: "a1", at: 1), Self.line(channel: "b", seq: 1, payload: "b1", at: 1)] {
            let record = try JSONDecoder().decode(MeterRecord.self, from: Data(line.utf8))
            await file.write(record)
            checkpoint.write(record)
        }
        await checkpoint.finish()
        try (Self.line(channel: "a", seq: 2, payload: "a2", at: 2)).appendTo(records)
        try Self.line(channel: "b", seq: 2, payload: "b2", at: 2).write(to: spool.appendingPathComponent("batch-000000000001.jsonl"),
                                                                     atomically: true, encoding: .utf8)
        try (Self.line(channel: "b", seq: 3, payload: "b3", at: 3) + #"{"type":"send_id3","sent_at":4,"#)
            .write(to: spool.appendingPathComponent("open.jsonl"), atomically: true, encoding: .utf8)

        let recovery = state.recover(recordsFile: records.path, spool: spool)
        #expect(recovery.points.byChannel.mapValues(\.payload) == ["a": "a2", "b": "b3"])
        #expect(recovery.notes == ["\(spool.path)/open.jsonl: 1 line(s) are not records; skipped"])
    }

    @Test(arguments: [
        ("{\"format\":\"id3-meter-state\",\"version\":1,\"chan", "not a JSON object (damaged or cut short)"),
        ("{\"format\":\"id3-meter-state\",\"version\":7,\"meter_version\":\"9.0.0\"}",
         "written in another format (id3-meter 9.0.0), not id3-meter-state 1"),
        ("{\"format\":\"something-else\"}", "written in another format, not id3-meter-state 1"),
    ])
    func aDamagedOrForeignCheckpointIsSetAsideAndNotTrusted(contents: String, reason: String) throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try contents.write(to: folder.appendingPathComponent("checkpoint.json"), atomically: true, encoding: .utf8)
        let recovery = StateDirectory.recovering(folder, records: nil, spool: nil)
        #expect(recovery.points.byChannel.isEmpty)
        #expect(recovery.notes.count == 1)
        #expect(recovery.notes.first?.contains("checkpoint.json: \(reason); set aside as checkpoint.json.set-aside-") == true,
                "\(recovery.notes)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(!names.contains("checkpoint.json"))
        let aside = try #require(names.first { $0.hasPrefix("checkpoint.json.set-aside-") })
        #expect(try String(contentsOf: folder.appendingPathComponent(aside), encoding: .utf8) == contents, "kept as it was")
    }

    @Test func aFolderInUseByAnotherMeterIsRefused() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try StateDirectory(directory: folder)
        #expect(throws: StateError.self) { try StateDirectory(directory: folder) }
        _ = first
    }
}

extension StateDirectory {
    /// What a start with the folder at `directory` recovers (its lock let go again).
    static func recovering(_ directory: URL, records: String?, spool: URL?) -> Recovery {
        (try! StateDirectory(directory: directory)).recover(recordsFile: records, spool: spool)
    }
}

extension String {
    func appendTo(_ url: URL) throws {
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(utf8))
        try handle.close()
    }
}

/// `kill -9` in the middle of a live stream, and a restart: the meter and `serve`.
@Suite("Resume after kill -9", .serialized, .timeLimit(.minutes(3)))
struct KillAndResumeTests {
    /// The `send_id3` and `resume` records in a JSON lines file so far.
    static func records(_ file: URL) -> [[String: Any]] {
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func sends(_ file: URL, channel: String? = nil) -> [[String: Any]] {
        records(file).filter { $0["type"] as? String == "send_id3" && (channel == nil || $0["channel"] as? String == channel) }
    }

    /// Waits, looking every 50 ms for up to 60 s, until `done` holds.
    static func wait(until done: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(60)
        while !done() {
            guard Date() < deadline else { throw CancellationError() }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// The stream's tags from segment `first` on, as (pts, owner), `count` of them.
    static func truth(_ stream: LiveStream, from first: Int, count: Int) -> [String] {
        Array((first..<(first + count + 2)).flatMap { segment in stream.tags(inSegment: segment).map { "\($0.pts) \($0.owner)" } }
            .prefix(count))
    }

    static func tags(_ sends: [[String: Any]]) -> [String] {
        sends.map { "\(($0["pts"] as? NSNumber)?.int64Value ?? -1) \($0["payload"] as? String ?? "")" }
    }

    static func stop(_ process: Process) {
        process.terminate()
        process.waitUntilExit()
    }

    @Test func theMeterKilledAndRestartedWithinTheWindowLosesAndDoublesNothing() throws {
        let server = try LiveServer(preroll: 3) { LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 10, startDate: $0) }
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("records.jsonl")
        let arguments = [server.url("master.m3u8"), "--output", file.path, "--state", folder.appendingPathComponent("state").path]

        let first = try Command.launch(arguments).process
        try Self.wait { Self.sends(file).count >= 5 }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let before = Self.sends(file).count
        let second = try Command.launch(arguments).process
        try Self.wait { Self.sends(file).count >= before + 6 }
        Self.stop(second)

        let sends = Self.sends(file)
        let stream = try #require(server.liveStream)
        let join = try #require(server.joinSegment(back: 3))
        #expect(Self.tags(sends) == Self.truth(stream, from: join, count: sends.count), "every tag from the first join, once, in order")
        let resume = Self.records(file).filter { $0["type"] as? String == "resume" }
        #expect(resume.count == 1)
        #expect(resume.first?["media_sequence"] as? Int == sends[before - 1]["media_sequence"] as? Int, "resumed at the last delivered tag's segment")
        #expect(second.terminationStatus == 0)
    }

    /// The collector's spool is the checkpoint too: what the killed run had not sent yet is sent
    /// by the next, and not delivered again.
    @Test func theMeterKilledWithOnlyACollectorLosesAndDoublesNothing() throws {
        let server = try LiveServer(preroll: 3) { LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 10, startDate: $0) }
        defer { server.stop() }
        let collector = try TestCollector()
        defer { collector.server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let arguments = [server.url("master.m3u8"), "--collector", collector.url.absoluteString,
                         "--spool", folder.appendingPathComponent("spool").path, "--state", folder.appendingPathComponent("state").path]
        func collected() -> [MeterRecord.Decoded] {
            collector.batches.sorted { $0.key < $1.key }.flatMap(\.value).filter { $0.payload != nil }
        }

        let first = try Command.launch(arguments).process
        try Self.wait { collected().count >= 4 }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let before = collected().count
        let second = try Command.launch(arguments).process
        try Self.wait { collected().count >= before + 6 }
        Self.stop(second)

        let sends = collected()
        let stream = try #require(server.liveStream)
        let join = try #require(server.joinSegment(back: 3))
        #expect(sends.map { "\($0.pts ?? -1) \($0.payload ?? "")" } == Self.truth(stream, from: join, count: sends.count))
    }

    @Test func theMeterRestartedAfterTheWindowMovedOnSaysHowMuchWasLost() throws {
        let server = try LiveServer(preroll: 3) { LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 3, startDate: $0) }
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("records.jsonl")
        let arguments = [server.url("master.m3u8"), "--output", file.path, "--state", folder.appendingPathComponent("state").path]

        let first = try Command.launch(arguments).process
        try Self.wait { Self.sends(file).count >= 4 }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let before = Self.sends(file)
        let last = try #require(before.last?["media_sequence"] as? Int)
        let stream = try #require(server.liveStream)
        // Until the window has moved two segments past the last delivered tag's.
        try Self.wait {
            let playlist = stream.playlist(at: Date())
            return playlist.firstMatch(of: /MEDIA-SEQUENCE:(\d+)/).flatMap { Int($0.output.1) }.map { $0 > last + 2 } ?? false
        }
        let second = try Command.launch(arguments).process
        try Self.wait { Self.sends(file).count >= before.count + 4 }
        Self.stop(second)

        let after = Array(Self.sends(file).dropFirst(before.count))
        let rejoin = try #require(after.first?["media_sequence"] as? Int)
        let join = try #require(server.joinSegment(back: 3))
        #expect(Self.tags(before) == Self.truth(stream, from: join, count: before.count))
        #expect(Self.tags(after) == Self.truth(stream, from: rejoin, count: after.count))
        let resume = try #require(Self.records(file).first { $0["type"] as? String == "resume" })
        // Segments of 1 s: every one after the last delivered tag's, before the rejoin, is lost.
        #expect(resume["lost_seconds"] as? Double == Double(rejoin - last - 1), "\(resume)")
        #expect(rejoin - last - 1 >= 1)
    }

    @Test func serveKilledAndRestartedWithinTheWindowLosesAndDoublesNothingOnAnyChannel() throws {
        func channel(_ seed: UInt64) -> LiveChannel {
            LiveChannel(preroll: 3) { date in
                var stream = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 10, startDate: date)
                stream.seed = seed
                return stream
            }
        }
        let server = try LineupServer(["a": channel(1), "b": channel(2)])
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try server.writeConfig(in: folder)
        let file = folder.appendingPathComponent("records.jsonl")
        let arguments = ["serve", config.path, "--listen", "127.0.0.1:0", "--output", file.path,
                         "--state", folder.appendingPathComponent("state").path]

        let first = try Command.launch(arguments).process
        try Self.wait { Self.sends(file, channel: "a").count >= 5 && Self.sends(file, channel: "b").count >= 5 }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let before = ["a", "b"].map { Self.sends(file, channel: $0).count }
        let second = try Command.launch(arguments).process
        try Self.wait { Self.sends(file, channel: "a").count >= before[0] + 6 && Self.sends(file, channel: "b").count >= before[1] + 6 }
        Self.stop(second)
        #expect(second.terminationStatus == 0)

        for name in ["a", "b"] {
            let sends = Self.sends(file, channel: name)
            let channel = try #require(server.channels[name])
            let stream = try #require(channel.liveStream)
            let join = try #require(channel.joinSegment(back: 3))
            #expect(Self.tags(sends) == Self.truth(stream, from: join, count: sends.count), "channel \(name)")
            let resumes = Self.records(file).filter { $0["type"] as? String == "resume" && $0["channel"] as? String == name }
            #expect(resumes.count == 1, "channel \(name)")
        }
    }

    @Test func aDamagedStateIsReportedAndTheMeterStillRuns() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = folder.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try Data("{\"format\":\"id3-meter-st".utf8).write(to: state.appendingPathComponent("checkpoint.json"))
        let input = Samples.path("hls/master.m3u8")
        let result = try Command.run([input, "--speed", "max", "--output", folder.appendingPathComponent("r.jsonl").path,
                                      "--state", state.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("checkpoint.json: not a JSON object (damaged or cut short); set aside as"), "\(result.stderr)")
        #expect(result.sends.count > 0)
        // The next run finds the checkpoint this one wrote, of the same input: a VOD resumes at its last tag.
        let again = try Command.run([input, "--speed", "max", "--output", folder.appendingPathComponent("r.jsonl").path,
                                     "--state", state.path])
        #expect(again.status == 0)
        #expect(again.sends.isEmpty, "nothing after the last tag of a VOD already metered")
        #expect(!again.stderr.contains("set aside"))
    }

    @Test func stateWithoutRecordsOnDiskIsAUsageError() throws {
        let result = try Command.run(["http://127.0.0.1:9/a.m3u8", "--state", "/tmp/x"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--state needs --output or --collector"))
    }
}
