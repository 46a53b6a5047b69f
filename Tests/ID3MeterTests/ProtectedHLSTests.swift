import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// Sample-encrypted HLS written by `scripts/protected_samples.py` (not this project's code):
/// SAMPLE-AES MPEG-TS and packed AAC, cbcs and cenc fMP4, under FairPlay, Widevine, PlayReady
/// and identity key tags. Its `truth.json` lists every tag it planted in the clear. A metadata
/// reader needs no key: every tag is read and no key URI is ever asked for.
@Suite("Protected HLS", .timeLimit(.minutes(3)))
struct ProtectedHLSTests {
    struct Planted: Decodable, Equatable, CustomStringConvertible {
        var playlist: String
        var segment: String
        var pts: Int64
        var owner: String

        var description: String { "\(playlist) \(segment) \(pts) \(owner.prefix(40))" }
    }

    static let forms = ["ts/index.m3u8", "packed/index.m3u8", "fmp4-cbcs/index.m3u8", "fmp4-cenc/index.m3u8"]

    static func planted(in playlists: Set<String>) throws -> [Planted] {
        struct Truth: Decodable { var tags: [Planted] }
        let data = try Data(contentsOf: URL(fileURLWithPath: Samples.path("protected/truth.json")))
        return try JSONDecoder().decode(Truth.self, from: data).tags.filter { playlists.contains($0.playlist) }
    }

    /// The Nielsen tags a scan found, as the writer's truth names them.
    static func found(_ events: [MediaEvent]) -> [Planted] {
        events.tags.compactMap { timed in
            guard let nielsen = timed.nielsenTags.first, let segment = timed.origin.segment, let pts = timed.pts else { return nil }
            let path = URL(fileURLWithPath: segment.uri).pathComponents.suffix(2)
            return Planted(playlist: "\(path.first ?? "")/index.m3u8", segment: path.last ?? "", pts: pts, owner: nielsen.payload)
        }
    }

    static func sampleEncryptionWarnings(_ events: [MediaEvent]) -> [(method: String, keyFormats: [String])] {
        events.warnings.compactMap { warning in
            if case .sampleEncrypted(let method, let formats) = warning.kind { (method, formats) } else { nil }
        }
    }

    @Test(arguments: forms)
    func everyTagOfEachFormIsReadWithoutAKey(_ playlist: String) async throws {
        let events = await Samples.scan(Samples.path("protected/\(playlist)"))
        #expect(events.failures.isEmpty, "\(events.failures)")
        let expected = try Self.planted(in: [playlist])
        #expect(expected.count >= 5)
        #expect(Self.found(events) == expected)
        // Said once for the input, naming the method and every key system.
        let said = Self.sampleEncryptionWarnings(events)
        #expect(said.count == 1, "\(said)")
        let formats = said.first?.keyFormats ?? []
        switch playlist {
        case "ts/index.m3u8": #expect(said.first?.method == "SAMPLE-AES" && formats == ["com.apple.streamingkeydelivery", "identity"])
        case "fmp4-cenc/index.m3u8":
            #expect(said.first?.method == "SAMPLE-AES-CTR" && formats == ["urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed", "com.microsoft.playready"])
        case "fmp4-cbcs/index.m3u8": #expect(formats.count == 3 && formats.contains("com.microsoft.playready"))
        default: #expect(said.first?.method == "SAMPLE-AES")
        }
    }

    @Test func aMasterWithASessionKeyReadsItsVariantAndRendition() async throws {
        let events = await Samples.scan(Samples.path("protected/master.m3u8"))
        #expect(events.failures.isEmpty, "\(events.failures)")
        let expected = try Self.planted(in: ["ts/index.m3u8", "packed/index.m3u8"])
        func order(_ tags: [Planted]) -> [Planted] { tags.sorted { ($0.playlist, $0.pts) < ($1.playlist, $1.pts) } }
        #expect(order(Self.found(events)) == order(expected))
        #expect(Self.sampleEncryptionWarnings(events).count == 1)
    }

    /// A segment encrypted whole (as AES-128 would) under a SAMPLE-AES key tag: its tags cannot
    /// be read, and the scan says so of that segment and reads the next.
    @Test func aSegmentEncryptedWholeIsReportedNotGuessed() async throws {
        let events = await Samples.scan(Samples.path("protected/mislabelled.m3u8"))
        #expect(!events.failures.isEmpty)
        #expect(events.failures.allSatisfy { $0.segment?.hasSuffix("mislabelled.ts") == true }, "\(events.failures)")
        let next = try Self.planted(in: ["ts/index.m3u8"]).filter { $0.segment == "seg1.ts" }
        #expect(!next.isEmpty && Self.found(events) == next)
    }

    /// Over HTTP, the scan, the meter and a `serve` line-up fetch playlists, init sections and
    /// segments, never a key.
    @Test func noKeyIsAskedForOverHTTP() async throws {
        let server = try LocalHTTPServer(serving: Samples.folder.appendingPathComponent("protected"))
        defer { server.stop() }
        let everyForm = try Self.planted(in: Set(Self.forms))

        var scanned: [Planted] = []
        for playlist in Self.forms {
            scanned += Self.found(await Samples.scan(server.url(playlist)))
        }
        #expect(scanned == everyForm)
        // A master with session keys (FairPlay's, and an identity key at a relative URI) too.
        let master = await Samples.scan(server.url("master.m3u8"))
        let inMaster = try Self.planted(in: ["ts/index.m3u8", "packed/index.m3u8"])
        #expect(master.failures.isEmpty && Self.found(master).count == inMaster.count)

        for playlist in Self.forms {
            let run = try await offThePool { try Command.run(["--speed", "max", "--format", "jsonl", server.url(playlist)]) }
            #expect(run.status == 0, "\(run.stderr)")
            let expected = try Self.planted(in: [playlist]).map { Command.Send(pts: $0.pts, payload: $0.owner) }
            #expect(run.sends == expected, "\(playlist)")
            #expect(run.stderr.contains("their tags are read in the clear, no key is fetched"), "\(run.stderr)")
        }

        let channels = Dictionary(uniqueKeysWithValues: Self.forms.map { ($0.split(separator: "/")[0].description, server.url($0)) })
        let running = try await RunningLineup(channels: channels)
        let (statuses, ended) = try await running.statuses { $0.allSatisfy { $0.state == .ended } }
        await running.lineup.removeAll()
        #expect(ended, "\(statuses)")
        for (name, url) in channels {
            let playlist = String(url.dropFirst(server.url("").count))
            let expected = try Self.planted(in: [playlist])
            #expect(running.deliveries(name).map { Command.Send(pts: $0.pts, payload: $0.payload) }
                == expected.map { Command.Send(pts: $0.pts, payload: $0.owner) }, "\(name)")
            #expect(running.records(name).warnings.filter { $0.contains("sample-encrypted") }.count == 1, "\(name)")
        }

        let asked = server.requests.map(\.path)
        let media = asked.filter { path in [".m3u8", ".ts", ".aac", ".m4s", ".mp4"].contains { path.hasSuffix($0) } }
        #expect(!asked.isEmpty && media == asked, "\(asked.filter { !media.contains($0) })")
        #expect(!asked.contains { $0.contains("key") })
    }
}
