import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// What an input is, told from its first bytes in one place (`MediaForm.sniff`).
@Suite("Media forms", .timeLimit(.minutes(2)))
struct MediaFormTests {
    /// A packed AAC segment whose opening tag is full of 0x47 bytes, at every 188-byte stride.
    @Test func anID3HeaderMeansPackedAudioWhatever0x47BytesFollow() async throws {
        let segment = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Samples.path("packed/aac/seg1.aac"))))
        let sync = ID3TagSpec(version: .v2_4, frames: [.priv(owner: "com.example.sync", data: [UInt8](repeating: 0x47, count: 1_000))])
        #expect(TransportStreamSync.offset(in: sync.bytes()) != nil, "the tag alone has sync bytes at a stride")
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("segment.dat").path
        try Data(sync.bytes() + segment).write(to: URL(fileURLWithPath: file))
        #expect(MediaForm.sniff(Array((sync.bytes() + segment).prefix(4_096))) == .packedAudio)
        let events = await Samples.scan(file)
        #expect(events.failures.isEmpty)
        let expected = try Samples.expected("packed/aac/expected.jsonl").filter { $0.segment == "seg1.aac" }
        #expect(events.frames().dropFirst() == ArraySlice(expected.map { FoundFrame(pts: $0.pts, id: $0.id, label: $0.owner ?? $0.description, segment: nil) }))
        #expect(events.frames().first?.label == "com.example.sync")
    }

    @Test func oneSyncByteIsNotMPEGTS() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let nullPacket = [0x47, 0x1F, 0xFF, 0x10] + [UInt8](repeating: 0xFF, count: 184)
        let lone = folder.appendingPathComponent("lone.ts").path, three = folder.appendingPathComponent("three.ts").path
        try Data([0x47] + [UInt8](repeating: 0x20, count: 299)).write(to: URL(fileURLWithPath: lone))
        try Data(nullPacket + nullPacket + nullPacket).write(to: URL(fileURLWithPath: three))
        #expect(MediaForm.sniff(nullPacket) == nil, "a single packet is one sync byte")
        let lost = await Samples.scan(lone).failures.map(\.kind)
        #expect(lost.count == 1 && lost.allSatisfy { if case .unknownForm = $0 { true } else { false } }, "\(lost)")
        let warned = await Samples.scan(three).warnings.map(\.kind)
        #expect(warned.count == 1 && warned.allSatisfy { if case .noTimedID3(.transportStream) = $0 { true } else { false } },
                "three packets are MPEG-TS, without timed ID3: \(warned)")
    }

    /// A recording cut inside a TS packet: read to its end, said so, exit 0, every tag whose bytes are there.
    @Test(arguments: [100, 1_000, 4_000])
    func aRecordingCutInsideAPacketIsReadToItsEnd(bytesCut: Int) async throws {
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Samples.path("spec/standard-60.ts"))))
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("cut.ts").path
        try Data(whole.dropLast(bytesCut)).write(to: URL(fileURLWithPath: file))
        #expect((whole.count - bytesCut) % 188 != 0, "cut inside a packet")
        let result = try await offThePool { try Command.run(["scan", "--format", "jsonl", file]) }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("ends inside a TS packet: the last \((whole.count - bytesCut) % 188) bytes"), "\(result.stderr)")
        // Every tag whose PES ends before the cut, as the independent writer's ground truth has them.
        let events = await Samples.scan(file)
        let expected = try Samples.expected("spec/standard-60.expected.jsonl").filter(\.nielsen).map(\.owner)
        let sent = events.tags.flatMap(\.nielsenTags).map(\.payload)
        #expect(!sent.isEmpty && sent == Array(expected.prefix(sent.count)))
        #expect(await Samples.scan(Samples.path("spec/standard-60.ts")).tags.count - events.tags.count <= (bytesCut + 187) / 188,
                "no more tags lost than packets cut")
    }

    /// A folder contributes every extension the tool reads, `.adts` among them.
    @Test func aFolderTakesEveryExtensionTheToolReads() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for (sample, name) in [("packed/aac/seg1.aac", "a.adts"), ("packed/ec3/seg0.ec3", "b.eac3"), ("fmp4/seg0.m4s", "c.cmfv"),
                               ("spec/standard-60.ts", "d.ts"), ("spec/standard-60.ts", "e.txt")] {
            try FileManager.default.copyItem(atPath: Samples.path(sample), toPath: folder.appendingPathComponent(name).path)
        }
        let expansion = await InputExpansion.expand([folder.path], scanner: TagScanner())
        #expect(expansion.inputs.map { ($0 as NSString).lastPathComponent } == ["a.adts", "b.eac3", "c.cmfv", "d.ts"])
        #expect(await Samples.scan(expansion.inputs[0]).frames().count == (try Samples.expected("packed/aac/expected.jsonl")).filter { $0.segment == "seg1.aac" }.count)
    }
}
