import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// MPEG-DASH written by the ffmpeg CLI's `dash` muxer with tags planted by
/// `scripts/dash_samples.py` (not this project's code): SegmentTemplate with a timeline and
/// `$Number$` or `$Time$` names, with `@duration`, an MPD EventStream, two Periods, a
/// SegmentBase file with its `sidx`, and a CENC-signalled MPD. Its `truth.json` lists every tag
/// it planted; each must be read once, at its time, and nothing else.
@Suite("DASH samples", .timeLimit(.minutes(3)))
struct DASHSampleTests {
    struct Planted: Decodable, Equatable, CustomStringConvertible {
        var pts: Int64
        var owner: String

        var description: String { "\(pts) \(owner.prefix(60))" }
    }

    static let manifests = ["timeline", "time", "number", "events", "periods", "repeats", "indexed", "template-index", "protected"]

    static func planted(_ name: String) throws -> [Planted] {
        let data = try Data(contentsOf: URL(fileURLWithPath: Samples.path("dash/truth.json")))
        return try JSONDecoder().decode([String: [Planted]].self, from: data)["\(name)/manifest.mpd"] ?? []
    }

    static func found(_ events: [MediaEvent]) -> [Planted] {
        events.tags.compactMap { timed in
            guard let nielsen = timed.nielsenTags.first, let pts = timed.pts else { return nil }
            return Planted(pts: pts, owner: nielsen.payload)
        }
    }

    @Test(arguments: manifests)
    func everyPlantedTagIsReadOnceAtItsTime(_ name: String) async throws {
        let events = await Samples.scan(Samples.path("dash/\(name)/manifest.mpd"))
        #expect(events.failures.isEmpty, "\(events.failures)")
        let expected = try Self.planted(name)
        #expect(expected.count >= 3)
        #expect(Self.found(events) == expected)
        // Every ID3 tag read is a planted one: the SCTE-35 emsg of the timeline sample is not ID3.
        #expect(events.tags.count == expected.count)
        #expect(events.tags.allSatisfy { $0.origin.segment?.dash != nil }, "\(events.tags.map(\.origin))")
    }

    @Test func segmentsNameTheirPeriodRepresentationAndNumber() async throws {
        let events = await Samples.scan(Samples.path("dash/periods/manifest.mpd"))
        let places = events.tags.compactMap { $0.origin.segment }
        #expect(places.map(\.dash?.period) == ["p0", "p0", "p0", "p0", "p1", "p1", "p1", "p1"])
        #expect(Set(places.compactMap(\.dash?.representation)) == ["1"])
        // Two media timelines, told apart: each Period's start (ms) is its discontinuity sequence.
        #expect(places.map(\.discontinuitySequence) == [0, 0, 0, 0, 8_000, 8_000, 8_000, 8_000])
        #expect(places.map(\.mediaSequence) == [1, 1, 2, 2, 1, 1, 2, 2])
        #expect(places.allSatisfy { $0.uri.contains("/periods/p0/") || $0.uri.contains("/periods/p1/") })

        let timeNamed = await Samples.scan(Samples.path("dash/time/manifest.mpd"))
        // $Time$ names: the segment's time is in its name, in the Representation's timescale.
        let named = timeNamed.tags.compactMap { $0.origin.segment.map { ($0.dash?.time ?? -1, Location.name($0.uri)) } }
        #expect(named.count == 6 && named.allSatisfy { $0.1 == "chunk-0-\($0.0).m4s" }, "\(named)")
    }

    /// The QA report's media duration counts both Periods (each numbers its segments from 1):
    /// the ffmpeg CLI wrote 8 s into each.
    @Test func theReportCountsEveryPeriodsMedia() async throws {
        let report = await QAReportTests.report(Samples.path("dash/periods/manifest.mpd"))
        #expect(report.segments == 4 && report.mediaSeconds.map { abs($0 - 16) < 0.1 } == true, "\(String(describing: report.mediaSeconds))")
        #expect(report.failures.isEmpty)
    }

    /// A restarted meter on a static MPD starts at its checkpoint's segment (the first Period
    /// that has that number; `ResumingEngine` holds back the rest of what was delivered), not at
    /// the start; a number no Period has reads it all.
    @Test func aStaticMPDResumesAtTheCheckpointsSegment() async throws {
        var events: [MediaEvent] = []
        for await event in TagSource(input: Samples.path("dash/periods/manifest.mpd"), resumeAt: 2, clock: ContinuousClock()).caught({ .failure($0) }) { events.append(event) }
        #expect(events.contains { if case .resumed(.atSegment(2)) = $0 { true } else { false } })
        #expect(events.segments.map { "\($0.dash?.period ?? "") \($0.mediaSequence)" } == ["p0 2", "p1 1", "p1 2"])

        var whole: [MediaEvent] = []
        for await event in TagSource(input: Samples.path("dash/periods/manifest.mpd"), resumeAt: 40, clock: ContinuousClock()).caught({ .failure($0) }) { whole.append(event) }
        #expect(whole.segments.count == 4 && !whole.contains { if case .resumed = $0 { true } else { false } })
    }

    /// `--variant N` past the Representations is an error naming the count, as for a master playlist.
    @Test func aRepresentationThatIsNotThereIsAnError() async throws {
        let events = await Samples.scan(Samples.path("dash/timeline/manifest.mpd"), variant: .index(7))
        #expect(events.tags.isEmpty && events.failures.count == 1)
        #expect(events.failures.first.map { "\($0)" }?.contains("a Period of the MPD has 2 Representations; cannot pick 7") == true, "\(events.failures)")
        let second = await Samples.scan(Samples.path("dash/timeline/manifest.mpd"), variant: .index(1))
        #expect(Self.found(second) == (try Self.planted("timeline")), "the audio Representation is the second")
    }

    @Test func anMPDEventStreamCountsARepeatedEventOnce() async throws {
        let events = await Samples.scan(Samples.path("dash/events/manifest.mpd"))
        #expect(events.warnings.isEmpty, "\(events.warnings)")
        #expect(Self.found(events) == (try Self.planted("events")))
        #expect(events.tags.allSatisfy { $0.carriage?.stream.hasPrefix("MPD EventStream") == true })
    }

    /// The repeats sample: every segment after the first holds its predecessor's boxes again
    /// (version 0 ones timed from their own segment), the first Period's last ones in the
    /// second's first segment; each event is delivered once, at its first box's time. Read
    /// as one file (an initialisation segment and the first Period's media), the same.
    @Test func anEventRepeatedInLaterSegmentsIsDeliveredOnce() async throws {
        let folder = Samples.folder.appendingPathComponent("dash/repeats")
        var boxes = 0, segments: [URL] = []
        for period in ["p0", "p1"] {
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(period).path)
            let media = names.filter { $0.hasPrefix("chunk-0-") }.sorted().map { folder.appendingPathComponent("\(period)/\($0)") }
            for file in media {
                let bytes = try Data(contentsOf: file)
                // "emsg" names the box, and is inside AOM's scheme too.
                boxes += bytes.ranges(of: Data("emsg".utf8)).count - bytes.ranges(of: Data("/emsg/".utf8)).count
            }
            if period == "p0" { segments = media }
        }
        let planted = try Self.planted("repeats")
        #expect(boxes == 2 * planted.count - 2, "each box but the last segment's is repeated once: \(boxes) boxes")
        #expect(Self.found(await Samples.scan(folder.appendingPathComponent("manifest.mpd").path)) == planted)

        let whole = try Samples.temporaryFolder().appendingPathComponent("p0.mp4")
        defer { try? FileManager.default.removeItem(at: whole.deletingLastPathComponent()) }
        var bytes = try Data(contentsOf: folder.appendingPathComponent("p0/init-0.m4s"))
        for segment in segments { bytes += try Data(contentsOf: segment) }
        try bytes.write(to: whole)
        // The first Period's tags: two segments of two.
        #expect(Self.found(await Samples.scan(whole.path)) == Array(planted.prefix(4)))
    }

    /// A hierarchical index: the indexed sample with a `sidx` put before its own whose one
    /// reference (type 1) is that index; `indexRange` names the new one. The same tags.
    @Test func aHierarchicalSegmentIndexIsFollowed() async throws {
        let source = Samples.folder.appendingPathComponent("dash/indexed")
        let file = [UInt8](try Data(contentsOf: source.appendingPathComponent("audio-0.mp4")))
        let (start, end) = (769, 845)   // the sample's indexRange, 769-844
        #expect(Array(file[(start + 4)..<(start + 8)]) == Array("sidx".utf8))
        let inner = try #require(SegmentIndex.parse(Array(file[start..<end]), offset: start))
        func be(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        let body = [0, 0, 0, 0] + be(1, 4) + be(inner.timescale, 4) + be(inner.references[0].time, 4) + be(0, 4) + be(0, 2) + be(1, 2)
            + be(0x8000_0000 | (end - start), 4) + be(inner.references.map(\.duration).reduce(0, +), 4) + be(0x9000_0000, 4)
        let top = be(8 + body.count, 4) + Array("sidx".utf8) + body
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(file[..<start] + top + file[start...]).write(to: folder.appendingPathComponent("audio-0.mp4"))
        let mpd = try String(contentsOf: source.appendingPathComponent("manifest.mpd"), encoding: .utf8)
            .replacingOccurrences(of: #"indexRange="769-844""#, with: #"indexRange="769-\#(start + top.count - 1)""#)
        try mpd.write(to: folder.appendingPathComponent("manifest.mpd"), atomically: true, encoding: .utf8)
        let events = await Samples.scan(folder.appendingPathComponent("manifest.mpd").path)
        #expect(events.warnings.isEmpty && events.failures.isEmpty, "\(events.warnings) \(events.failures)")
        #expect(Self.found(events) == (try Self.planted("indexed")))
        #expect(events.segments.count == inner.references.count, "read a subsegment at a time, not as one segment")
    }

    /// `SegmentTemplate@index` over HTTP: the resource it names is looked into for its `sidx`
    /// (its first 64 KiB, then the box itself by range), and read a subsegment at a time by range,
    /// its movie header from the file `@initialization` names; the tags planted in that resource.
    @Test func aTemplatesIndexIsFoundInTheResourceItNames() async throws {
        let server = try LocalHTTPServer(serving: Samples.folder)
        defer { server.stop() }
        let events = await Samples.scan(server.url("dash/template-index/manifest.mpd"))
        #expect(events.warnings.isEmpty && events.failures.isEmpty, "\(events.warnings) \(events.failures)")
        #expect(Self.found(events) == (try Self.planted("indexed")))
        let media = server.requests.filter { $0.path == "dash/indexed/audio-0.mp4" }.map { $0.headers["range"] ?? "whole" }
        #expect(media.prefix(2) == ["whole", "bytes=769-844"], "looked into, then its sidx (769-844) asked by range: \(media)")
        #expect(media.count == 2 + events.segments.count && media.dropFirst(2).allSatisfy { $0.hasPrefix("bytes=") }, "\(media)")
        #expect(server.requests.contains { $0.path == "dash/template-index/init-0.mp4" })
    }

    @Test func aProtectedMPDIsReadWithoutALicence() async throws {
        let events = await Samples.scan(Samples.path("dash/protected/manifest.mpd"))
        let said = events.warnings.compactMap { warning -> (String, [String])? in
            if case .sampleEncrypted(let method, let systems) = warning.kind { (method, systems) } else { nil }
        }
        #expect(said.count == 1)
        #expect(said.first?.0 == "cenc")
        #expect(said.first?.1.contains("urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed") == true)
    }

    /// Over HTTP: scan, the meter at full speed and a `serve` line-up read every sample's tags
    /// exactly; nothing but the MPDs, init segments and media is ever asked for (no licence).
    @Test func scanMeterAndServeOverHTTP() async throws {
        let server = try LocalHTTPServer(serving: Samples.folder.appendingPathComponent("dash"))
        defer { server.stop() }
        for name in Self.manifests {
            let expected = try Self.planted(name)
            #expect(Self.found(await Samples.scan(server.url("\(name)/manifest.mpd"))) == expected, "scan \(name)")
            let run = try await offThePool { try Command.run(["--speed", "max", "--format", "jsonl", server.url("\(name)/manifest.mpd")]) }
            #expect(run.status == 0, "\(name): \(run.stderr)")
            #expect(run.sends == expected.map { Command.Send(pts: $0.pts, payload: $0.owner) }, "meter \(name)")
        }
        let channels = Dictionary(uniqueKeysWithValues: ["timeline", "periods", "repeats", "indexed"].map { ($0, server.url("\($0)/manifest.mpd")) })
        let running = try await RunningLineup(channels: channels)
        let (statuses, ended) = try await running.statuses { $0.allSatisfy { $0.state == .ended } }
        await running.lineup.removeAll()
        #expect(ended, "\(statuses)")
        for name in channels.keys {
            #expect(running.deliveries(name).map { Command.Send(pts: $0.pts, payload: $0.payload) }
                == (try Self.planted(name)).map { Command.Send(pts: $0.pts, payload: $0.owner) }, "serve \(name)")
        }
        let asked = server.requests.map(\.path)
        #expect(!asked.isEmpty && asked.allSatisfy { [".mpd", ".m4s", ".mp4"].contains(where: $0.hasSuffix) }, "\(asked)")
    }
}
