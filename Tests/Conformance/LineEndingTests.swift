import Testing
@testable import ID3MeterCore
import SampleGenerator

/// Line endings as a player reads a playlist (docs/CONFORMANCE.md, "A playlist whose lines end
/// in CR alone").
///
/// hls.js, src/loader/m3u8-parser.ts: a segment URI is matched by `(\S[^\r\n]*)` and a tag's
/// value by `.*` or `[^\r\n]*`, so a CR ends a line as an LF does; RFC 8216 names LF and CRLF.
@Suite("Conformance: playlist line endings")
struct LineEndingTests {
    /// Lines end in LF, CRLF or a lone CR (RFC 8216 4.1 allows the first two; hls.js's parser
    /// takes all three), mixed in one playlist, with non-ASCII titles and URIs, blank lines, white
    /// space around a line, and no break after the last: every ending reads as the LF one.
    @Test func anyLineEndingReadsAsLineFeed() throws {
        let lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:2", "#EXT-X-MEDIA-SEQUENCE:7", "", "#EXTINF:2.002,Ünïcödé 日本",
                     "séance/a.ts", "  #EXTINF:2,  ", "b.ts  ", "#EXTINF:1.5,😀", "c d.ts", "#EXT-X-ENDLIST"]
        let expected = ["/data/séance/a.ts", "/data/b.ts", "/data/c d.ts"]
        var random = SeededRandom(seed: 20261129)
        for variant in 0..<60 {
            let endings = ["\n", "\r\n", "\r"]
            // The first three use one ending throughout; the rest mix them at random.
            let text = lines.map { line in line + endings[variant < 3 ? variant : Int(random.next() % 3)] }.joined()
            // Without the last line's break (CRLF is one `Character`).
            let cut = variant % 2 == 1 ? String(text.dropLast()) : text
            guard case .media(let media) = try PlaylistParser.parse(cut, location: "/data/index.m3u8") else {
                Issue.record("expected a media playlist: \(cut.debugDescription)"); return
            }
            #expect(media.segments.map(\.uri) == expected, "\(cut.debugDescription)")
            #expect(media.segments.map(\.duration) == [2.002, 2, 1.5])
            #expect(media.segments.map(\.mediaSequence) == [7, 8, 9])
            #expect(media.hasEndList)
        }
    }
}
