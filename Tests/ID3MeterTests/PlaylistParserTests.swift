import Foundation
import Testing
import SampleGenerator
@testable import ID3Meter
@testable import ID3MeterCore

@Suite("HLS playlists")
struct PlaylistParserTests {
    @Test func masterPlaylistVariantsAndRenditions() throws {
        let text = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English, main",URI="audio/en.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720,FRAME-RATE=29.970,CODECS="avc1.4d401f,mp4a.40.2",AUDIO="aud"
            hi/index.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=500000,FRAME-RATE=25
            https://cdn.example/lo/index.m3u8
            """
        guard case .master(let master) = try PlaylistParser.parse(text, location: "http://host/live/master.m3u8") else {
            Issue.record("expected a master playlist"); return
        }
        #expect(master.variants.map(\.uri) == ["http://host/live/hi/index.m3u8", "https://cdn.example/lo/index.m3u8"])
        #expect(master.variants.map(\.bandwidth) == [2_000_000, 500_000])
        #expect(master.variants.map(\.frameRate) == [29.97, 25])
        #expect(master.variants[0].codecs == "avc1.4d401f,mp4a.40.2")
        #expect(master.variants[0].audioGroup == "aud")
        #expect(master.renditions == [Rendition(type: "AUDIO", groupID: "aud", name: "English, main", uri: "http://host/live/audio/en.m3u8", isDefault: false)])
        #expect(VariantChoice.lowestBandwidth.pick(from: master.variants)?.bandwidth == 500_000)
        #expect(VariantChoice.highestBandwidth.pick(from: master.variants)?.bandwidth == 2_000_000)
        #expect(VariantChoice("0")?.pick(from: master.variants)?.bandwidth == 2_000_000)
        #expect(VariantChoice("5")?.pick(from: master.variants) == nil)
        #expect(VariantChoice("middle") == nil)
    }

    @Test func mediaPlaylistSequencesDatesAndKeys() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:6
            #EXT-X-MEDIA-SEQUENCE:100
            #EXT-X-DISCONTINUITY-SEQUENCE:3
            #EXT-X-PROGRAM-DATE-TIME:2026-11-21T10:00:00.500Z
            #EXTINF:6.006,
            a.ts
            #EXT-X-KEY:METHOD=AES-128,URI="key.bin",IV=0x000102030405060708090A0B0C0D0E0F
            #EXTINF:5.5,title
            /abs/b.ts
            #EXT-X-DISCONTINUITY
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:6,
            c.ts
            #EXT-X-PROGRAM-DATE-TIME:2026-11-21T11:00:00+01:00
            #EXTINF:6,
            d.ts
            #EXT-X-ENDLIST
            """
        guard case .media(let media) = try PlaylistParser.parse(text, location: "/data/stream/index.m3u8") else {
            Issue.record("expected a media playlist"); return
        }
        #expect(media.targetDuration == 6)
        #expect(media.hasEndList)
        #expect(media.segments.map(\.uri) == ["/data/stream/a.ts", "/abs/b.ts", "/data/stream/c.ts", "/data/stream/d.ts"])
        #expect(media.segments.map(\.mediaSequence) == [100, 101, 102, 103])
        #expect(media.segments.map(\.discontinuitySequence) == [3, 3, 4, 4])
        #expect(media.segments.map(\.duration) == [6.006, 5.5, 6, 6])
        let start = Date(timeIntervalSince1970: 1_795_255_200.5)
        // Carried forward within a discontinuity sequence, never across one.
        #expect(media.segments.map(\.programDateTime) == [start, start.addingTimeInterval(6.006), nil,
                                                          Date(timeIntervalSince1970: 1_795_255_200)])
        #expect(media.segments.map(\.key) == [nil, EncryptionKey(uri: "/data/stream/key.bin", iv: Array(0...15)), nil, nil])
    }

    @Test func sampleEncryptionKeysByKeyFormat() throws {
        // FairPlay and Widevine keys side by side (RFC 8216bis 4.4.4.4): each applies until the
        // next key of its KEYFORMAT; METHOD=NONE ends them all; AES-128 beside them stays fetched.
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:6
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://one",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"
            #EXT-X-KEY:METHOD=SAMPLE-AES-CTR,URI="data:text/plain;base64,AAAA",KEYFORMAT="urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"
            #EXTINF:6,
            a.ts
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://two",KEYFORMAT="com.apple.streamingkeydelivery"
            #EXTINF:6,
            b.ts
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:6,
            c.ts
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="k"
            #EXT-X-KEY:METHOD=AES-128,URI="whole.key",KEYFORMAT="identity"
            #EXTINF:6,
            d.ts
            """
        guard case .media(let media) = try PlaylistParser.parse(text, location: "http://h/p.m3u8") else {
            Issue.record("expected a media playlist"); return
        }
        let fairPlay = "com.apple.streamingkeydelivery", widevine = "urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"
        #expect(media.segments.map(\.sampleEncryption) == [
            SampleEncryption(method: "SAMPLE-AES", keyFormats: [fairPlay, widevine]),
            // The second FairPlay key replaced the first and went after the Widevine one.
            SampleEncryption(method: "SAMPLE-AES-CTR", keyFormats: [widevine, fairPlay]),
            nil,
            nil,
        ])
        #expect(media.segments.map(\.key) == [nil, nil, nil, EncryptionKey(uri: "http://h/whole.key", iv: nil)])
    }

    @Test func errorsNameTheLine() {
        let cases: [(String, PlaylistError.Reason, Int?)] = [
            ("#EXTINF:6,\na.ts", .notHLS, 1),
            ("#EXTM3U\n#EXTINF:six,\na.ts", .badDuration("six"), 2),
            ("#EXTM3U\na.ts", .segmentWithoutDuration("a.ts"), 2),
            ("#EXTM3U\n#EXT-X-KEY:METHOD=AES-256,URI=\"k\"\n#EXTINF:6,\na.ts", .unsupportedKeyMethod("AES-256"), 2),
            ("#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI=\"skd://k\",KEYFORMAT=\"com.apple.streamingkeydelivery\"\n",
             .wholeSegmentKeyFormat("com.apple.streamingkeydelivery"), 2),
            ("#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x12\n", .badKeyIV("0x12"), 2),
            ("#EXTM3U\n#EXT-X-STREAM-INF:RESOLUTION=1x1\nv.m3u8", .variantWithoutBandwidth, 2),
            ("#EXTM3U\n#EXT-X-PROGRAM-DATE-TIME:yesterday\n", .badProgramDateTime("yesterday"), 2),
        ]
        for (text, reason, line) in cases {
            #expect(throws: PlaylistError.self) { try PlaylistParser.parse(text, location: "p.m3u8") }
            do {
                _ = try PlaylistParser.parse(text, location: "p.m3u8")
            } catch {
                #expect(error.reason == reason, "\(error) should be \(reason)")
                #expect(error.line == line)
            }
        }
    }

    @Test func locations() {
        #expect(Location.resolve("seg.ts", against: "https://h/a/b/index.m3u8?token=1") == "https://h/a/b/seg.ts")
        #expect(Location.resolve("../seg.ts", against: "http://h/a/b/index.m3u8") == "http://h/a/seg.ts")
        #expect(Location.resolve("/root/seg.ts", against: "http://h/a/index.m3u8") == "http://h/root/seg.ts")
        #expect(Location.resolve("seg.ts", against: "index.m3u8") == "seg.ts")
        // A one-character playlist name (Foundation's deletingLastPathComponent traps on one).
        #expect(Location.resolve("seg.ts", against: "v") == "seg.ts")
        #expect(Location.resolve("../seg.ts", against: "/a/b/v") == "/a/seg.ts")
        #expect(Location.resolve("seg.ts", against: "/v") == "/seg.ts")
        #expect(Location.resolve("../x/seg.ts", against: "/data/a/index.m3u8") == "/data/x/seg.ts")
        #expect(Location.resolve("udp://239.0.0.1:1234", against: "/data/index.m3u8") == "udp://239.0.0.1:1234")
    }

    /// Whether a reference has a scheme is told from its bytes when they are ASCII; any text
    /// gets the answer reading its characters gives: schemes, paths, colons anywhere, non-ASCII
    /// letters and digits, combining marks, CR LF.
    @Test func aSchemeIsToldAsReadingCharactersTellsIt() {
        var random = SeededRandom(seed: 20261129)
        let pool: [String] = ["h", "t", "p", "s", "H", "0", "9", "+", "-", ".", ":", "/", "?", "#", " ", "_", "\r\n", "\r", "é", "e\u{301}",
                              "٣", "日", "ß", "😀", "\u{0}", "%", "@"]
        let named = ["http://h/a", "https:x", "a:b", "a:", ":a", "ab", "", "udp://239.0.0.1:1", "c:\\x", "/p:q", "x1+.-:y", "é1:x", "ab\r\n:x"]
        let made = (0..<20_000).map { _ in (0..<Int(random.next() % 9)).map { _ in pool[Int(random.next() % UInt64(pool.count))] }.joined() }
        for text in named + made {
            #expect(Location.hasScheme(text) == Location.hasSchemeReadingCharacters(text), "\(text.debugDescription)")
        }
        #expect(Location.hasScheme("https://h/a") && !Location.hasScheme("c:/x") && !Location.hasScheme("seg.ts"))
    }
}

