import CID3MeterShim
import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// The rules and bounds that keep a stream's values from reaching anything they should not.
@Suite("Untrusted values", .timeLimit(.minutes(2)))
struct UntrustedValueTests {
    @Test(arguments: [
        ("http://cdn/a/seg.ts", "http://cdn/a/index.m3u8", true), ("https://other/x.ts", "http://cdn/index.m3u8", true),
        ("file:///etc/passwd", "http://cdn/index.m3u8", false), ("/etc/passwd", "https://cdn/index.m3u8", false),
        ("pipe:0", "/local/index.m3u8", false), ("tcp://127.0.0.1:9?listen=1", "/local/index.m3u8", false),
        ("/local/seg.ts", "/local/index.m3u8", true), ("file:/local/seg.ts", "/local/index.m3u8", true),
        ("http://cdn/seg.ts", "/local/index.m3u8", true), ("http:/etc/passwd", "http://cdn/index.m3u8", false),
        ("https://", "http://cdn/index.m3u8", false), ("HTTP://cdn/x.ts", "http://cdn/index.m3u8", true),
        ("concat:a|b", "/local/index.m3u8", false), ("data:,x", "http://cdn/index.m3u8", false),
    ])
    func theReferenceRule(reference: String, playlist: String, allowed: Bool) {
        #expect((ReferenceRule.refusal(of: reference, from: playlist) == nil) == allowed)
    }

    @Test func eachURLIsOpenedWithItsOwnProtocolsOnly() {
        #expect(ReferenceRule.protocols(for: "https://cdn/x.ts") == "http,https,tls,tcp")
        #expect(ReferenceRule.protocols(for: "/local/x.ts") == "file")
        #expect(ReferenceRule.protocols(for: "udp://239.0.0.1:1234") == "udp")
        #expect(ReferenceRule.protocols(for: "rtp://239.0.0.1:1234") == "rtp,udp")
    }

    /// A redirect is followed only to http(s) with a host: the error says where it pointed.
    @Test func aRedirectOffHTTPIsRefused() async throws {
        let server = try LocalHTTPServer { _ in
            LocalHTTPServer.Response(status: 302, headers: ["Location": "file://\(Samples.path("ts/nielsen.ts"))"])
        }
        defer { server.stop() }
        do {
            _ = try await Fetcher(ioTimeout: .seconds(2)).fetch(server.url("x.ts"), as: .segment)
            Issue.record("the redirect was followed")
        } catch {
            guard case .redirect(let reason) = error.error else { Issue.record("\(error)"); return }
            #expect(reason.contains("file://") && reason.contains("not http(s) with a host"), "\(reason)")
            #expect(error.attempts == 1, "a refused redirect is not tried again")
        }
    }

    @Test func problemsPastTheFirstFiveOfAKindAreCountedAndSummedUp() {
        var tally = ProblemTally()
        let shown = (0..<12).filter { tally.admit("continuity error on PID 0x0102 at byte \($0 * 188)") }
        #expect(shown == Array(0..<5))
        let otherKind = tally.admit("lost MPEG-TS sync at byte 9: 3 bytes skipped")
        #expect(otherKind, "another kind is shown")
        let summaries = tally.summaries()
        #expect(summaries == ["7 more like this (not listed): continuity error on PID 0x0102 at byte 2068"])
        let again = tally.summaries()
        #expect(again.isEmpty)
    }

    @Test func anExtinfFarOverTheTargetIsTakenAsTheTarget() throws {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.4,\na.ts\n#EXTINF:31536000,\nb.ts\n"
        guard case .media(let media) = try PlaylistParser.parse(text, location: "/x/index.m3u8") else { Issue.record(); return }
        #expect(media.segments.map(\.duration) == [6.4, 6])
        #expect(media.segments.map(\.note) == [nil, "line 5: EXTINF 31536000.0 s is far over EXT-X-TARGETDURATION 6.0 s; taken as 6.0 s"])
    }

    @Test(arguments: [
        ("#EXTM3U\n#EXT-X-TARGETDURATION:86401\n", .badTargetDuration("86401"), "(0 to 86400 s)"),
        ("#EXTM3U\n#EXT-X-PROGRAM-DATE-TIME:1969-12-31T23:59:59Z\n", .badProgramDateTime("1969-12-31T23:59:59Z"), "from 1970 to 9999"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=99999999999999999999\nv.m3u8\n", .badBandwidth("99999999999999999999"), "is too large"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1e3\nv.m3u8\n", .badBandwidth("1e3"), "is not a decimal integer"),
    ] as [(String, PlaylistError.Reason, String)])
    func valuesOutOfBoundsAreNamed(text: String, reason: PlaylistError.Reason, words: String) {
        #expect(throws: PlaylistError.self) { try PlaylistParser.parse(text, location: "/x/index.m3u8") }
        do { _ = try PlaylistParser.parse(text, location: "/x/index.m3u8") } catch {
            #expect(error.reason == reason, "\(error)")
            #expect("\(error.reason)".contains(words), "the bound is said: \(error)")
        }
    }

    @Test(arguments: [Double.infinity, 1e-300, 0, -1, .nan, 301])
    func aFrameRateOutOfRangeIsPassedOverForTheNextChoice(rate: Double) {
        let choice = FrameRateChoice(info: SourceInfo(variantFrameRate: rate, videoFrameRate: 25, isLive: true), option: nil)
        #expect(choice.framesPerSecond == 25 && choice.origin == .video)
        #expect(choice.rejected.count == 1)
    }

    /// The three carriers through the one extractor contract, read whole and in pieces cut
    /// everywhere (1 byte, odd sizes, a TS packet, larger): the same events, offsets included.
    @Test(arguments: ["packed/aac/seg1.aac", "packed/mp3/seg1.mp3", "packed/ac3/seg0.ac3", "fmp4/seg1.m4s",
                      "spec/standard-60.ts", "quirks/quirks.ts", "spec/v23-184.ts"])
    func anyChunkingReadsAlike(sample: String) throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Samples.path(sample))))
        let form = try #require(MediaForm.sniff(Array(bytes.prefix(MediaForm.sniffLength))))
        #expect(form == (sample.hasSuffix("m4s") ? .fragmentedMP4 : sample.hasSuffix("ts") ? .transportStream : .packedAudio))
        let initSegment = sample.hasSuffix("m4s") ? try [UInt8](Data(contentsOf: URL(fileURLWithPath: Samples.path("fmp4/init.mp4")))) : nil
        func read(cutAt cuts: [Int]) -> [String] {
            var events: [String] = []
            var extractor = form.makeExtractor(origin: TagOrigin(source: sample), initSegment: initSegment)
            extractor.extract(bytes, cutAt: cuts) { events.append("\($0)") }
            return events
        }
        let whole = read(cutAt: [])
        #expect(whole.contains { $0.hasPrefix("tag(") }, "the sample has tags")
        for step in [1, 7, 188, 1_000, 4_096] {
            #expect(read(cutAt: Array(stride(from: step, to: bytes.count, by: step))) == whole, "pieces of \(step) bytes")
        }
    }

    @Test func aesIsUndoneAsTheBytesArriveWhateverTheirChunking() throws {
        let key = [UInt8](0..<16), iv = [UInt8](repeating: 7, count: 16)
        let plain = [UInt8]((0..<1_000).map { UInt8(truncatingIfNeeded: $0 * 31) })
        var padded = plain + [UInt8](repeating: UInt8(16 - plain.count % 16), count: 16 - plain.count % 16)
        var chain = iv
        #expect(idm_aes128_cbc(&padded, padded.count, key, &chain, 0) == 0)
        for step in [1, 15, 16, 17, 333, padded.count] {
            var decryptor = SegmentDecryptor(key: key, iv: iv)
            var out: [UInt8] = []
            for start in stride(from: 0, to: padded.count, by: step) {
                out += padded[start..<min(start + step, padded.count)].withUnsafeBufferPointer { decryptor.decrypt($0) }
            }
            let last = decryptor.finish()
            out += try #require(last)
            #expect(out == plain, "pieces of \(step) bytes")
        }
    }
}

/// Failures are values: a caller matches on what happened, not on the words.
@Suite("Typed failures", .timeLimit(.minutes(2)))
struct TypedFailureTests {
    @Test func aMissingPlaylistCarriesItsHTTPStatus() async throws {
        let server = try LocalHTTPServer { _ in .notFound }
        defer { server.stop() }
        do {
            _ = try await PlaylistLoader(fetcher: Fetcher(retry: .none)).load(server.url("gone.m3u8"))
            Issue.record("a 404 was read as a playlist")
        } catch {
            guard case .fetch(.http(let status, _), .playlist, _) = error else {
                Issue.record("\(error)"); return
            }
            #expect(status == 404)
        }
    }

    @Test func aBadPlaylistCarriesItsLine() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("bad.m3u8").path
        try Data("#EXTM3U\n#EXT-X-TARGETDURATION:abc\n".utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try await PlaylistLoader().load(path)
            Issue.record("a bad playlist was read")
        } catch {
            guard case .unreadablePlaylist(_, let playlistError) = error else { Issue.record("\(error)"); return }
            #expect(playlistError == PlaylistError(.badTargetDuration("abc"), line: 2))
        }
    }

    /// A segment's failure reaches the scan's caller with the loader's error inside.
    @Test func aMissingSegmentCarriesItsHTTPStatus() async throws {
        let playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6,\nspec/standard-60.ts\n#EXTINF:6,\ngone.ts\n#EXT-X-ENDLIST\n"
        let server = try LocalHTTPServer { request in
            request.path == "p.m3u8" ? LocalHTTPServer.Response(body: Array(playlist.utf8)) : .file(request.path, in: Samples.folder)
        }
        defer { server.stop() }
        let events = await Samples.scan(server.url("p.m3u8"), fetcher: Fetcher(retry: .none))
        let failure = try #require(events.failures.first)
        #expect(failure.segment?.hasSuffix("gone.ts") == true)
        guard case .segmentSkipped(1, SegmentLoadError.fetch(.http(let status, _), .segment, _)) = failure.kind else {
            Issue.record("\(failure)"); return
        }
        #expect(status == 404)
        #expect(events.segments.map(\.mediaSequence) == [0], "the segment read, and only it")
    }

    /// Bytes between packets and a recording cut inside a packet, at offsets this test made.
    @Test func damageCarriesWhatAndWhere() throws {
        let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Samples.path("spec/standard-60.ts"))))
        let junk = [UInt8](repeating: 0, count: 100)
        let damaged = Array(whole[..<(188 * 10)] + junk + whole[(188 * 10)..<(whole.count - 100)])
        var extractor = MediaExtractor(origin: TagOrigin(source: "damaged.ts"))
        var events: [MediaEvent] = []
        extractor.extract(damaged) { events.append($0) }
        let lost = events.failures.compactMap { $0.cause as? InputFailure.StreamDamage }
        #expect(lost == [.lostSync(at: 188 * 10, skipped: 100)])
        let cut = events.warnings.compactMap { $0.cause as? InputFailure.StreamDamage }
        #expect(cut == [.endsInsidePacket(at: Int64(whole.count - 188 + 100), bytes: 88)])
    }

    @Test func aRefusedReferenceSaysSo() async throws {
        do {
            _ = try await PlaylistLoader().load("file:///etc/passwd", referencedBy: "https://cdn.example/master.m3u8")
            Issue.record("a remote playlist reached a local file")
        } catch {
            guard case .refused(let reference, let scheme, .playlist) = error else { Issue.record("\(error)"); return }
            #expect(reference == "file:///etc/passwd")
            #expect(scheme == nil)
        }
    }
}
