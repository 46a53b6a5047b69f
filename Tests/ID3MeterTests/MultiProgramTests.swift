import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import ID3MeterServe
import SampleGenerator

/// A multi-program transport stream (a broadcast contribution feed: several channels, each a
/// program with its own timed-ID3 PID), written by scripts/mpts_samples.py with the tags each
/// program carries: a scan reports every program apart, the meter reads the one it is told to
/// and refuses to read two channels as one.
@Suite("Multi-program transport streams", .serialized, .timeLimit(.minutes(3)))
struct MultiProgramTests {
    struct Planted: Decodable, Equatable, CustomStringConvertible {
        var program: Int
        var pid: Int
        var pts: Int64
        var owner: String

        var description: String { "program \(program) PID \(pid) \(pts)" }
        var send: Command.Send { Command.Send(pts: pts, payload: owner) }
    }

    static func planted(_ name: String, program: Int? = nil) throws -> [Planted] {
        let data = try Data(contentsOf: URL(fileURLWithPath: Samples.path("mpts/truth.json")))
        let all = try JSONDecoder().decode([String: [Planted]].self, from: data)[name] ?? []
        return all.filter { program == nil || $0.program == program }
    }

    static func found(_ events: [MediaEvent]) -> [Planted] {
        events.tags.compactMap { timed in
            guard let nielsen = timed.nielsenTags.first, let place = timed.transportStream, let program = place.program,
                  let pts = timed.pts else { return nil }
            return Planted(program: program, pid: place.pid, pts: pts, owner: nielsen.payload)
        }
    }

    /// Records of the meter or scan (JSONL): each Nielsen one's program, PID, PTS and payload.
    static func recorded(_ stdout: String) -> [Planted] {
        stdout.split(separator: "\n").compactMap { line in
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let payload = record["payload"] as? String, let pts = record["pts"] as? Int64 else { return nil }
            return Planted(program: record["program"] as? Int ?? -1, pid: record["pid"] as? Int ?? -1, pts: pts, owner: payload)
        }
    }

    @Test func aScanReportsEveryProgramApartAndOneWhenAsked() async throws {
        let path = Samples.path("mpts/two-programs.ts")
        let all = try Self.planted("two-programs.ts")
        #expect(Set(all.map(\.program)) == [1, 2])
        let events = await Samples.scan(path)
        #expect(events.failures.isEmpty)
        #expect(Self.found(events).sorted { $0.pts < $1.pts } == all.sorted { $0.pts < $1.pts })
        // Each program a tag stream of its own: the QA report spaces its tags apart.
        let streams = Dictionary(grouping: events.tags, by: { $0.carriage?.stream ?? "" }).mapValues(\.count)
        #expect(streams == ["PID 0x0102": 9, "PID 0x0202": 9])

        let two = await Samples.scan(path, programs: .only(2))
        #expect(Self.found(two) == (try Self.planted("two-programs.ts", program: 2)))
        let run = try await offThePool { try Command.run(["scan", "--format", "jsonl", path]) }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Self.recorded(run.stdout).sorted { $0.pts < $1.pts } == all.sorted { $0.pts < $1.pts })
    }

    /// The meter is told which program; without being told, it refuses a stream whose programs
    /// both carry tags (naming them) and delivers nothing, and reads a stream with one alone.
    @Test func theMeterReadsTheProgramItIsToldAndRefusesTwoAsOne() async throws {
        let path = Samples.path("mpts/two-programs.ts")
        let one = try await offThePool { try Command.run(["--speed", "max", "--format", "jsonl", "--program", "1", path]) }
        #expect(one.status == 0, "\(one.stderr)")
        #expect(Self.recorded(one.stdout) == (try Self.planted("two-programs.ts", program: 1)))

        let refused = try await offThePool { try Command.run(["--speed", "max", "--format", "jsonl", path]) }
        #expect(refused.status == 1)
        #expect(refused.sends.isEmpty)
        #expect(refused.stderr.contains("programs 1, 2 each carry timed ID3"), "\(refused.stderr)")

        let single = try await offThePool {
            try Command.run(["--speed", "max", "--format", "jsonl", Samples.path("mpts/one-tagged.ts")])
        }
        #expect(single.status == 0, "\(single.stderr)")
        #expect(Self.recorded(single.stdout) == (try Self.planted("one-tagged.ts")))

        let absent = try await offThePool { try Command.run(["--speed", "max", "--program", "7", path]) }
        #expect(absent.sends.isEmpty)
        #expect(absent.stderr.contains("no timed-ID3 stream"), "\(absent.stderr)")
    }

    /// Over HTTP, the MPTS cut into HLS segments: the meter and a `serve` channel with
    /// `program: 2` read program 2's tags; a channel without one reads nothing and says why.
    @Test func segmentsOfAnMPTSMeteredAndServedByProgram() async throws {
        let server = try LocalHTTPServer(serving: Samples.folder.appendingPathComponent("mpts"))
        defer { server.stop() }
        let expected = try Self.planted("hls/index.m3u8", program: 2)
        let run = try await offThePool {
            try Command.run(["--speed", "max", "--format", "jsonl", "--program", "2", server.url("hls/index.m3u8")])
        }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Self.recorded(run.stdout) == expected)

        let config = try LineupConfig.parse("""
            defaults: {alert_after: 60, vod: true}
            channels:
              - {name: two, url: "\(server.url("hls/index.m3u8"))", program: 2}
              - {name: both, url: "\(server.url("hls/index.m3u8"))"}
            """, file: "lineup.yaml")
        let running = try await RunningLineup(config: config)
        let (statuses, ended) = try await running.statuses { $0.allSatisfy { $0.state == .ended } }
        await running.lineup.removeAll()
        #expect(ended, "\(statuses)")
        #expect(running.deliveries("two").map { Command.Send(pts: $0.pts, payload: $0.payload) } == expected.map(\.send))
        #expect(running.deliveries("two").allSatisfy { $0.program == 2 && $0.pid == 0x202 })
        #expect(running.deliveries("both").isEmpty)
    }

    @Test func aChannelsProgramIsAProgramNumber() throws {
        #expect(throws: ConfigError.self) { try LineupConfig.parse("channels:\n  - {name: a, url: \"http://h/a.m3u8\", program: 1.5}\n", file: "l") }
        #expect(throws: ConfigError.self) { try LineupConfig.parse("channels:\n  - {name: a, url: \"http://h/a.m3u8\", program: 0}\n", file: "l") }
        let config = try LineupConfig.parse("channels:\n  - {name: a, url: \"http://h/a.m3u8\", program: 3}\n", file: "l")
        #expect(config.channels.first?.program == 3)
    }
}
