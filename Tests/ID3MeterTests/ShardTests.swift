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

    @Test func shardsAreReadFromTextAndHostNames() {
        #expect(Shard("2/3") == Shard(index: 2, count: 3))
        #expect(Shard("3/3") == nil && Shard("-1/3") == nil && Shard("1/0") == nil && Shard("x") == nil && Shard("1/2/3") == nil)
        #expect(Shard(hostName: "id3-meter-3", count: 4) == Shard(index: 3, count: 4))
        #expect(Shard(hostName: "id3-meter-4", count: 4) == nil, "an ordinal past the count")
        #expect(Shard(hostName: "id3meter7", count: 10) == nil && Shard(hostName: "42", count: 100) == nil)
    }

    /// Three `serve --shard I/3` processes on one config: each channel metered by exactly one.
    @Test func threeInstancesSplitALineupExactly() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("lineup.yaml").path
        // Nothing answers on port 9: each channel fails to open and is retried, which is enough to list it.
        let names = (0..<30).map { "c\($0)" }
        // The test servers are on loopback, which API channels may reach only when the file allows it.
        try Data((["api_hosts: [127.0.0.1]", "channels:"] + names.map { "  - {name: \($0), url: \"http://127.0.0.1:9/\($0).m3u8\"}" })
            .joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        var held: [[String]] = []
        var puts: [(status: Int, body: String)] = []
        for index in 0..<3 {
            let (process, _, err) = try Command.launch(["serve", path, "--shard", "\(index)/3", "--listen", "127.0.0.1:0"])
            defer {
                process.terminate()
                process.waitUntilExit()
            }
            let (address, log) = ServeCommandTests.apiAddress(from: err)
            let api = try #require(address, "\(log)")
            let channels = try await ServeCommandTests.request("GET", "\(api)/channels")
            let view = try #require(try JSONSerialization.jsonObject(with: Data(channels.body.utf8)) as? [String: Any])
            let listed = try #require(view["channels"] as? [[String: Any]])
            held.append(listed.compactMap { $0["name"] as? String })
            #expect(view["shard"] as? String == "\(index)/3")
            let metrics = ServeCommandTests.samples(try await ServeCommandTests.request("GET", "\(api)/metrics").body)
            #expect(metrics[#"id3meter_shard_info{shard="\#(index)",shards="3"}"#] == 1, "\(metrics.keys.filter { $0.contains("shard") })")
            #expect(log.contains("(shard \(index)/3: \(held[index].count) of 30)"), "\(log)")
            puts.append(try await ServeCommandTests.request("PUT", "\(api)/channels/extra",
                                                            body: #"{"name": "extra", "url": "http://127.0.0.1:9/extra.m3u8"}"#))
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
}
