import Foundation
import Testing
import ID3Meter
import SampleGenerator

/// Live streams that break the rules, as packagers and origins do: a media sequence that goes
/// back (a restart) or jumps a million ahead (a renumbering), a discontinuity sequence that goes
/// back, an EXT-X-ENDLIST shown for a moment. Nothing lost, nothing doubled, each said once.
@Suite("Live streams that misbehave", .serialized, .timeLimit(.minutes(3)))
struct LiveMisbehaviourTests {
    /// 24 segments of 1 s, published four times faster than real time (the meter plays at
    /// --speed 4), with a restart at segment 12.
    static func restarting(shift: Int) -> LiveServer.Make {
        { date in
            var stream = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 12, segmentCount: 24, timeScale: 4, startDate: date)
            stream.restart = LiveStream.Restart(at: 12, shift: shift, discontinuitySequence: (before: 3, after: 0))
            return stream
        }
    }

    func meter(_ make: @escaping LiveServer.Make) throws -> (Command.Result, sends: [String], truth: [String]) {
        let server = try LiveServer(preroll: 1, make: make)
        defer { server.stop() }
        let result = try Command.run([server.url("master.m3u8"), "--speed", "4", "--format", "jsonl", "--timeout", "5"])
        let stream = try #require(server.liveStream)
        let join = try #require(server.joinSegment(back: 3))
        #expect(join < 12, "joined before the restart")
        let truth = (join..<24).flatMap { stream.tags(inSegment: $0).map { "\($0.pts) \($0.owner)" } }
        return (result, result.sends.map { "\($0.pts ?? -1) \($0.payload ?? "")" }, truth)
    }

    @Test func aMediaSequenceThatGoesBackIsReadOnAndSaid() throws {
        let (result, sends, truth) = try meter(Self.restarting(shift: -5))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sends == truth, "every tag once, in order")
        #expect(result.stderr.contains("the media sequence went back from"), "\(result.stderr)")
        #expect(result.stderr.contains("EXT-X-DISCONTINUITY-SEQUENCE went back from 3 to 0"), "\(result.stderr)")
        #expect(!result.stderr.contains("left the live window"))
    }

    @Test func aMillionSegmentJumpIsARenumberingNotALoss() throws {
        let (result, sends, truth) = try meter(Self.restarting(shift: 1_000_000))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sends == truth, "every tag once, in order")
        #expect(result.stderr.contains("renumbered, nothing taken as lost"), "\(result.stderr)")
        #expect(!result.stderr.contains("left the live window"), "no phantom segments")
    }

    /// serve: a live channel that shows EXT-X-ENDLIST for two seconds is opened again and resumes
    /// after its last tag; a channel whose sequence goes back is read on, with a warning record;
    /// a channel configured vod: true ends at its ENDLIST.
    @Test func serveReopensALiveChannelAfterAnEndListAndWarnsOfARestart() throws {
        let glitchy = LiveChannel(preroll: 3) { date in
            var stream = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 8, startDate: date)
            stream.seed = 1
            stream.endListGlitch = 7..<9
            return stream
        }
        let restarted = LiveChannel(preroll: 3) { date in
            var stream = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 8, startDate: date)
            stream.seed = 2
            stream.restart = LiveStream.Restart(at: 7, shift: -5)
            return stream
        }
        let ending = LiveChannel(preroll: 3) { date in
            var stream = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 8, segmentCount: 6, startDate: date)
            stream.seed = 3
            return stream
        }
        let server = try LineupServer(["glitchy": glitchy, "restarted": restarted, "ending": ending])
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("lineup.yaml")
        try """
            channels:
              - {name: glitchy, url: "\(server.url("glitchy"))"}
              - {name: restarted, url: "\(server.url("restarted"))"}
              - {name: ending, url: "\(server.url("ending"))", vod: true}

            """.write(to: config, atomically: true, encoding: .utf8)
        let (process, out, err) = try Command.launch(["serve", config.path, "--listen", "127.0.0.1:0"])
        defer { if process.isRunning { process.terminate() } }
        let reader = RecordReader(out)
        func pts(_ record: [String: Any]) -> Int64 { (record["pts"] as? NSNumber)?.int64Value ?? 0 }
        // Segment 12 is past the glitch and the restart on both channels.
        let past = 900_000 + 12 * 90_000
        var through: Set<String> = []
        reader.read { record in
            if record["type"] as? String == "send_id3", pts(record) > past, let channel = record["channel"] as? String {
                through.insert(channel)
            }
            return through.isSuperset(of: ["glitchy", "restarted"])
        }
        kill(process.processIdentifier, SIGTERM)
        reader.read { _ in false }
        process.waitUntilExit()
        let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = reader.records
        #expect(process.terminationStatus == 0)

        for (name, channel) in [("glitchy", glitchy), ("restarted", restarted), ("ending", ending)] {
            let sends = lines.filter { $0["type"] as? String == "send_id3" && $0["channel"] as? String == name }
            let stream = try #require(channel.liveStream)
            let join = try #require(channel.joinSegment(back: 3))
            #expect(ResumeTests.tags(sends) == ResumeTests.truth(stream, from: join, count: sends.count), "channel \(name): each tag once, in order")
        }
        #expect(log.contains("channel glitchy: its live stream showed EXT-X-ENDLIST; opening it again"), "\(log)")
        #expect(lines.contains { $0["type"] as? String == "resume" && $0["channel"] as? String == "glitchy" })
        #expect(lines.contains { $0["type"] as? String == "warning" && $0["channel"] as? String == "restarted"
            && ($0["message"] as? String)?.contains("the media sequence went back") == true })
        #expect(log.contains("channel ending: its stream ended"))
        let endingSends = lines.filter { $0["type"] as? String == "send_id3" && $0["channel"] as? String == "ending" }
        #expect(endingSends.count == Set(ResumeTests.tags(endingSends)).count, "the vod channel was not read again")
    }
}

extension LiveServer {
    typealias Make = @Sendable (Date) -> LiveStream
}

/// The resume tests' helpers, under a name the other suites can use.
typealias ResumeTests = KillAndResumeTests
