import Foundation
import Synchronization
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import ID3MeterServe
import SampleGenerator

/// Redundant variants (RFC 8216bis: the same encoding listed again on another host, or on
/// another content-steering pathway): when the host read fails, the stream goes on from the copy
/// at the same media sequence, nothing lost and nothing delivered twice.
@Suite("Redundant streams", .serialized, .timeLimit(.minutes(3)))
struct RedundantStreamTests {
    @Test func copiesAreTheSameEncodingElsewhereTheSteeringPathwayFirst() throws {
        let text = """
            #EXTM3U
            #EXT-X-CONTENT-STEERING:SERVER-URI="steer.json",PATHWAY-ID="CDN-B"
            #EXT-X-STREAM-INF:BANDWIDTH=800000,CODECS="avc1.4d401f,mp4a.40.2",PATHWAY-ID="CDN-A"
            https://a.example/hi.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=200000,CODECS="avc1.4d401f,mp4a.40.2",PATHWAY-ID="CDN-A"
            https://a.example/lo.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=200000,CODECS="avc1.4d401f,mp4a.40.2",PATHWAY-ID="CDN-B"
            https://b.example/lo.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=200000,CODECS="avc1.64001f,mp4a.40.2",PATHWAY-ID="CDN-B"
            https://b.example/other-codec.m3u8
            """
        guard case .master(let master) = try PlaylistParser.parse(text, location: "https://a.example/master.m3u8") else {
            Issue.record("expected a master playlist"); return
        }
        #expect(master.steeringPathway == "CDN-B")
        let chosen = try #require(VariantChoice.lowestBandwidth.pick(from: master.variants))
        #expect(master.paths(for: chosen).map(\.uri) == ["https://b.example/lo.m3u8", "https://a.example/lo.m3u8"])
        #expect(master.paths(for: master.variants[0]).map(\.uri) == ["https://a.example/hi.m3u8"])
    }

    /// A VOD whose first host lists the segments but serves none: every tag from the copy, once.
    @Test func aHostThatServesNoSegmentIsReadFromItsCopy() async throws {
        let truth = try ProtectedHLSTests.planted(in: ["ts/index.m3u8"])
        let folder = Samples.folder.appendingPathComponent("protected")
        let backup = try LocalHTTPServer(host: "127.0.0.2", serving: folder)
        defer { backup.stop() }
        let master = """
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=200000
            ts/index.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=200000
            \(backup.url("ts/index.m3u8"))

            """
        let primary = try LocalHTTPServer { request in
            switch request.path {
            case "master.m3u8": LocalHTTPServer.Response(body: Array(master.utf8))
            case "ts/index.m3u8": .file(request.path, in: folder)
            default: LocalHTTPServer.Response(status: 503)
            }
        }
        defer { primary.stop() }
        var limits = Fetcher.Limits()
        limits.maximumConsecutiveLostSegments = 2
        let events = await Samples.scan(primary.url("master.m3u8"), fetcher: Fetcher(retry: Samples.quickRetry, limits: limits))
        #expect(ProtectedHLSTests.found(events) == truth)
        let switches = events.warnings.filter { if case .switchedPath = $0.kind { true } else { false } }
        #expect(switches.count == 1 && switches.first?.description.contains(backup.url("ts/index.m3u8")) == true, "\(switches)")
        #expect(backup.requests.map(\.path) == ["ts/index.m3u8", "ts/seg0.ts", "ts/seg1.ts", "ts/seg2.ts"])

        // The meter the same, its records saying where they came from.
        let run = try await offThePool {
            try Command.run(["--speed", "max", "--format", "jsonl", "--max-lost-segments", "2", primary.url("master.m3u8")])
        }
        #expect(run.status == 1, "segments failed on the first host: \(run.stderr)")
        #expect(run.sends == truth.map { Command.Send(pts: $0.pts, payload: $0.owner) })
        let warnings = run.stdout.split(separator: "\n").filter { $0.contains(#""type":"warning""#) }
        #expect(warnings.count == 1 && warnings.first?.contains("redundant copy at") == true, "\(warnings)")
    }

    /// A live channel on two hosts; the first stops answering mid-stream (its segments, then its
    /// playlist) and comes back later.
    /// `serve` reads on from the second: every tag once, in order; the switch is a record, an
    /// `on_backup` alert and a metric.
    @Test func aLiveChannelWhoseHostDiesGoesOnFromItsCopy() async throws {
        let channel = ServeTests.channel(seed: 11)
        let backup = try LocalHTTPServer(host: "127.0.0.2") { channel.respond(to: $0) }
        defer { backup.stop() }
        let down = Mutex(false)
        let primary = try LocalHTTPServer { request in
            if request.path == "master.m3u8" {
                let copy = "#EXT-X-STREAM-INF:BANDWIDTH=200000,FRAME-RATE=29.970\n"
                return LocalHTTPServer.Response(body: Array("#EXTM3U\n\(copy)live.m3u8\n\(copy)\(backup.url("live.m3u8"))\n".utf8))
            }
            // Down while segments 5 to 9 are published, as a CDN edge that fails and recovers; its
            // playlist a second later, so that a segment fails before the switch and is read again.
            let published = channel.liveStream?.publishedCount(at: Date()) ?? 0
            let isDown = (request.path == "live.m3u8" ? 6..<10 : 5..<10).contains(published)
            down.withLock { $0 = $0 || isDown }
            return isDown ? LocalHTTPServer.Response(status: 503) : channel.respond(to: request)
        }
        defer { primary.stop() }
        let running = try await RunningLineup(channels: ["r": primary.url("master.m3u8")])
        let (statuses, ended) = try await running.statuses { $0.first?.state == .ended }
        let metrics = running.metrics
        await running.lineup.removeAll()
        #expect(ended, "\(statuses)")
        #expect(down.withLock { $0 })

        let join = try #require(channel.joinSegment(back: 3))
        let delivered = running.deliveries("r").compactMap(\.payload)
        #expect(!delivered.isEmpty && delivered == channel.owners(from: join), "\(delivered.count) of \(channel.owners(from: join).count)")

        let switched = running.records("r").warnings.filter { $0.contains("redundant copy at") }
        #expect(switched.count == 1 && switched.first?.contains(backup.url("live.m3u8")) == true, "\(switched)")
        #expect(running.alerts("r").contains { $0.name == "on_backup" && $0.active })
        #expect(metrics[#"id3meter_path_switches_total{channel="r"}"#] == 1)
        // A segment failed on the first host and was read from the second.
        #expect((statuses.first?.segmentsFailed ?? 0) >= 1, "\(statuses)")
        let fromBackup = Set(backup.requests.map(\.path).filter { $0.hasPrefix("seg") })
        #expect(primary.requests.contains { fromBackup.contains($0.path) }, "\(fromBackup.sorted())")
    }

    @Test func steeringManifestsAreReadWithinBounds() throws {
        func parse(_ text: String) throws(SteeringManifest.Problem) -> SteeringManifest { try SteeringManifest.parse(Array(text.utf8)) }
        let manifest = try parse(#"{"VERSION":1,"TTL":30,"RELOAD-URI":"next.json?s=2","PATHWAY-PRIORITY":["B","A"]}"#)
        #expect(manifest == SteeringManifest(timeToLive: 30, reloadURI: "next.json?s=2", pathwayPriority: ["B", "A"]))
        // A TTL of 0 would have it asked without a pause, one of years never again.
        #expect(try parse(#"{"VERSION":1,"TTL":0,"PATHWAY-PRIORITY":["A"]}"#).timeToLive == 1)
        #expect(try parse(#"{"VERSION":1,"TTL":1e12,"PATHWAY-PRIORITY":["A"]}"#).timeToLive == 86_400)
        #expect(try parse(#"{"VERSION":1,"PATHWAY-PRIORITY":["A"]}"#).timeToLive == 300)
        #expect(throws: SteeringManifest.Problem.version(2)) { try parse(#"{"VERSION":2,"PATHWAY-PRIORITY":["A"]}"#) }
        #expect(throws: SteeringManifest.Problem.noPathwayPriority) { try parse(#"{"VERSION":1,"PATHWAY-PRIORITY":[]}"#) }
        #expect(throws: SteeringManifest.Problem.notJSON) { try parse("<html>") }
    }

    /// A steering server is a reference of the master playlist like any other: a remote master's
    /// may not name a local file.
    @Test func aSteeringServerIsHeldToTheReferenceRule() async {
        let loader = PlaylistLoader(fetcher: Fetcher(retry: Samples.quickRetry))
        do {
            _ = try await loader.loadSteering("file:///etc/passwd", referencedBy: "http://127.0.0.1:9/master.m3u8", targetDuration: nil)
            Issue.record("a local file was read as a remote master's steering manifest")
        } catch {
            guard case .refused(_, let scheme, .steeringManifest) = error else { Issue.record("\(error)"); return }
            #expect(scheme == nil, "refused as a local file")
        }
    }

    /// A content-steering server moves a live channel from pathway A to pathway B mid-stream:
    /// the channel follows, every tag once, and B is not a backup (no `on_backup` alert).
    @Test func aSteeringServerMovesTheChannelToAnotherPathway() async throws {
        let channel = ServeTests.channel(seed: 13)
        let other = try LocalHTTPServer(host: "127.0.0.2") { channel.respond(to: $0) }
        defer { other.stop() }
        let first = try LocalHTTPServer { request in
            switch request.path {
            case "master.m3u8":
                let master = """
                    #EXTM3U
                    #EXT-X-CONTENT-STEERING:SERVER-URI="steer.json",PATHWAY-ID="A"
                    #EXT-X-STREAM-INF:BANDWIDTH=200000,FRAME-RATE=29.970,PATHWAY-ID="A"
                    live.m3u8
                    #EXT-X-STREAM-INF:BANDWIDTH=200000,FRAME-RATE=29.970,PATHWAY-ID="B"
                    \(other.url("live.m3u8"))

                    """
                return LocalHTTPServer.Response(body: Array(master.utf8))
            case "steer.json":
                let moved = (channel.liveStream?.publishedCount(at: Date()) ?? 0) >= 7
                let priority = moved ? #"["B","A"]"# : #"["A","B"]"#
                return LocalHTTPServer.Response(body: Array(#"{"VERSION":1,"TTL":1,"PATHWAY-PRIORITY":\#(priority)}"#.utf8),
                                                contentType: "application/json")
            default:
                return channel.respond(to: request)
            }
        }
        defer { first.stop() }
        let running = try await RunningLineup(channels: ["s": first.url("master.m3u8")])
        let (statuses, ended) = try await running.statuses { $0.first?.state == .ended }
        await running.lineup.removeAll()
        #expect(ended, "\(statuses)")

        let join = try #require(channel.joinSegment(back: 3))
        let delivered = running.deliveries("s").compactMap(\.payload)
        #expect(!delivered.isEmpty && delivered == channel.owners(from: join))
        let steered = running.records("s").warnings.filter { $0.contains("put pathway B first") }
        #expect(steered.count == 1, "\(running.records("s").warnings)")
        #expect(!running.alerts("s").contains { $0.name == "on_backup" })
        // The steering server was told the pathway in use, before and after.
        let told = first.requests.filter { $0.path == "steer.json" }.compactMap { $0.query["_HLS_pathway"] }
        #expect(told.first == "A" && told.last == "B", "\(told)")
        #expect(other.requests.contains { $0.path.hasPrefix("seg") })
        #expect(!first.requests.contains { $0.path == "seg13.ts" })
    }
}
