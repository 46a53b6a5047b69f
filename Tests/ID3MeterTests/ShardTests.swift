import Foundation
import Testing
import ID3MeterServe

/// Rendezvous sharding of a line-up over instances.
@Suite("Shards", .serialized, .timeLimit(.minutes(2)))
struct ShardTests {
    static let names = (0..<3_000).map { "channel-\($0)" }

    @Test func everyChannelHasExactlyOneShardAndTheSharesAreEven() throws {
        let shards = try (0..<3).map { try #require(Shard(index: $0, count: 3)) }
        for name in Self.names { #expect(shards.filter { $0.holds(name) }.count == 1, "\(name)") }
        let shares = shards.map { shard in Self.names.filter(shard.holds).count }
        #expect(shares.allSatisfy { (900...1_100).contains($0) }, "\(shares)")
    }

    /// From 3 instances to 4, only the channels the new one wins move: about a quarter.
    @Test func aFourthInstanceTakesAboutAQuarterAndNothingElseMoves() {
        let moved = Self.names.filter { Shard.owner(of: $0, count: 3) != Shard.owner(of: $0, count: 4) }
        #expect((600...900).contains(moved.count), "\(moved.count) of 3000 moved")
        #expect(moved.allSatisfy { Shard.owner(of: $0, count: 4) == 3 }, "every moved channel went to the new instance")
    }

    @Test func shardsAreReadFromTextAndPodNames() {
        #expect(Shard("2/3") == Shard(index: 2, count: 3))
        #expect(Shard("3/3") == nil && Shard("-1/3") == nil && Shard("1/0") == nil && Shard("x") == nil && Shard("1/2/3") == nil)
        #expect(Shard.ordinal(of: "id3-meter-3") == 3 && Shard.ordinal(of: "id3-meter-a-12") == 12)
        #expect(Shard.ordinal(of: "id3meter7") == nil && Shard.ordinal(of: "42") == nil && Shard.ordinal(of: "-") == nil)
        #expect(Placement(ordinalOf: "id3-meter-3", shards: 4, copies: 1) == Placement(shard: Shard(index: 3, count: 4), copy: 0))
        #expect(Placement(ordinalOf: "id3-meter-4", shards: 4, copies: 1) == nil, "an ordinal past shards × copies")
    }

    /// A StatefulSet of 3 shards × 2 copies: pods 0-2 are the first copy of shards 0-2, pods 3-5
    /// the second, so every shard has two pods and no pod is two copies.
    @Test func sixPodsAreTwoCopiesOfThreeShards() throws {
        let placements = try (0..<6).map { try #require(Placement(ordinalOf: "id3-meter-\($0)", shards: 3, copies: 2)) }
        #expect(placements.map { $0.shard?.index } == [0, 1, 2, 0, 1, 2])
        #expect(placements.map(\.copy) == [0, 0, 0, 1, 1, 1])
        #expect(placements[4].description == "shard 1/3, copy 2 of 2")
        #expect(Placement(ordinalOf: "id3-meter-6", shards: 3, copies: 2) == nil)
        #expect(Placement(shard: nil, copies: 9) == nil && Placement(shard: nil, copy: 2, copies: 2) == nil)
    }

    static let lineupNames = (0..<30).map { "c\($0)" }

    /// A line-up of 30 channels on port 9, where nothing answers: each channel fails to open and
    /// is retried, which is enough to list it.
    static func writeLineup(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("lineup.yaml").path
        // The test servers are on loopback, which API channels may reach only when the file allows it.
        try Data((["api_hosts: [127.0.0.1]", "channels:"] + lineupNames.map { "  - {name: \($0), url: \"http://127.0.0.1:9/\($0).m3u8\"}" })
            .joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// What a `serve` of the line-up at `path` with `arguments` shows: `GET /channels`, `GET
    /// /metrics`, its log, and the answer to a PUT of `put` (a channel's name and JSON), if given.
    static func serve(_ path: String, _ arguments: [String], environment: [String: String] = [:], put: (String, String)? = nil)
        async throws -> (view: [String: Any], metrics: [String: Double], log: String, put: (status: Int, body: String)?) {
        let (process, _, err) = try Command.launch(["serve", path, "--listen", "127.0.0.1:0"] + arguments, environment: environment)
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let (address, log) = ServeCommandTests.apiAddress(from: err)
        let api = try #require(address, "\(log)")
        let channels = try await ServeCommandTests.request("GET", "\(api)/channels")
        let view = try #require(try JSONSerialization.jsonObject(with: Data(channels.body.utf8)) as? [String: Any])
        let metrics = ServeCommandTests.samples(try await ServeCommandTests.request("GET", "\(api)/metrics").body)
        guard let (name, body) = put else { return (view, metrics, log, nil) }
        return (view, metrics, log, try await ServeCommandTests.request("PUT", "\(api)/channels/\(name)", body: body))
    }

    static func channelNames(_ view: [String: Any]) -> [String] { ((view["channels"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String } }

    /// Three `serve --shard I/3` processes on one config: each channel metered by exactly one.
    @Test func threeInstancesSplitALineupExactly() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.writeLineup(in: folder)
        let names = Self.lineupNames
        var held: [[String]] = []
        var puts: [(status: Int, body: String)] = []
        for index in 0..<3 {
            let serve = try await Self.serve(path, ["--shard", "\(index)/3"],
                                             put: ("extra", #"{"name": "extra", "url": "http://127.0.0.1:9/extra.m3u8"}"#))
            held.append(Self.channelNames(serve.view))
            #expect(serve.view["shard"] as? String == "\(index)/3")
            #expect(serve.metrics[#"id3meter_shard_info{shard="\#(index)",shards="3",copy="",meter="\#(ServeCommandTests.hostName)"}"#] == 1,
                    "\(serve.metrics.keys.filter { $0.contains("shard") })")
            #expect(serve.metrics["id3meter_copies"] == 1)
            #expect(serve.log.contains("(shard \(index)/3: \(held[index].count) of 30)"), "\(serve.log)")
            puts.append(try #require(serve.put))
        }
        // A channel added over the API is metered by the one instance that would hold it; the
        // others refuse it and name that one.
        let taker = try #require(puts.firstIndex { $0.status == 201 }, "\(puts)")
        #expect(puts.filter { $0.status == 201 }.count == 1, "\(puts)")
        for (index, put) in puts.enumerated() where index != taker {
            #expect(put.status == 409)
            #expect(put.body.contains("channel 'extra' belongs to shard \(taker)/3, not this one (\(index)/3)"), "\(put.body)")
        }
        #expect(held.flatMap { $0 }.sorted() == names.sorted(), "\(held)")
        #expect(held.allSatisfy { !$0.isEmpty })
    }

    /// `--shard auto --copies 2` takes the shard and the copy from the meter's name, as a pod
    /// of a StatefulSet of shards × copies does: pod 4 of 3 × 2 meters what `--shard 1/3` does,
    /// and says it is shard 1's second copy.
    @Test func aPodOfShardsTimesCopiesMetersItsShardAndSaysWhichCopy() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.writeLineup(in: folder)
        let pod = try await Self.serve(path, ["--shard", "auto", "--meter", "id3-meter-4"],
                                       environment: ["ID3METER_SHARDS": "3", "ID3METER_COPIES": "2"])
        let named = try await Self.serve(path, ["--shard", "1/3"])
        let names = Self.channelNames
        #expect(!names(pod.view).isEmpty && names(pod.view) == names(named.view))
        #expect(pod.view["shard"] as? String == "1/3" && pod.view["copy"] as? Int == 1 && pod.view["copies"] as? Int == 2)
        #expect(pod.view["meter"] as? String == "id3-meter-4")
        #expect(pod.metrics[#"id3meter_shard_info{shard="1",shards="3",copy="1",meter="id3-meter-4"}"#] == 1, "\(pod.metrics.keys.sorted())")
        #expect(pod.metrics["id3meter_copies"] == 2)
        #expect(pod.log.contains("(shard 1/3: \(names(pod.view).count) of 30; copy 2 of 2)"), "\(pod.log)")

        let past = try Command.run(["serve", path, "--shard", "auto", "--shards", "3", "--copies", "2", "--meter", "id3-meter-6"])
        #expect(past.status == 2)
        #expect(past.stderr.contains("--shard auto: the meter's name 'id3-meter-6' does not end in -I with I below 6 (3 shards × 2 copies)"),
                "\(past.stderr)")
        let many = try Command.run(["serve", path, "--copies", "9"])
        #expect(many.status == 2 && many.stderr.contains("--copies must be 1 to 8, not 9"), "\(many.stderr)")
    }
}
