import Foundation
import Testing
@testable import ID3MeterCore

/// The MPD model as ISO/IEC 23009-1 defines it, on MPDs written here by hand, and what an
/// untrusted MPD cannot do: declare entities, read files, grow a tree or a timeline without bound.
@Suite("MPD parser", .timeLimit(.minutes(2)))
struct MPDParserTests {
    static func mpd(_ body: String, attributes: String = #"type="static" mediaPresentationDuration="PT12S""#) -> [UInt8] {
        Array(#"<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" \#(attributes)>\#(body)</MPD>"#.utf8)
    }

    static func parse(_ body: String, attributes: String = #"type="static" mediaPresentationDuration="PT12S""#,
                      location: String = "https://cdn.example/live/stream.mpd") throws -> MPD {
        try MPDParser.parse(mpd(body, attributes: attributes), location: location)
    }

    static func reason(_ bytes: [UInt8]) -> MPDError.Reason? {
        do { _ = try MPDParser.parse(bytes, location: "https://cdn.example/a.mpd") } catch { return error.reason }
        return nil
    }

    @Test func durations() {
        #expect(XMLDuration.seconds("PT4S") == 4)
        #expect(XMLDuration.seconds("PT1H2M3.5S") == 3_723.5)
        #expect(XMLDuration.seconds("P1DT2H") == 93_600)
        #expect(XMLDuration.seconds("PT0S") == 0)
        for bad in ["", "P", "PT", "4S", "PT-4S", "P1Y", "P1M", "PT1.5M", "PT4S4S", "PTS", "PT1e400S", "P99999999999999DT"] {
            #expect(XMLDuration.seconds(bad) == nil, "\(bad)")
        }
    }

    @Test func templates() throws {
        let template = try #require(URLTemplate("seg-$RepresentationID$-$Number%05d$-$Bandwidth$-$Time$-$$.m4s"))
        #expect(template.filled(representationID: "a1", bandwidth: 128_000, number: 42, time: 90_000) == "seg-a1-00042-128000-90000-$.m4s")
        #expect(URLTemplate("$Number%d$")?.filled(representationID: "", bandwidth: 0, number: 7) == "7")
        for bad in ["$Number", "$Unknown$", "$Number%05x$", "$Number%099d$", "$RepresentationID%05d$", "$Time%-5d$"] {
            #expect(URLTemplate(bad) == nil, "\(bad)")
        }
        #expect(throws: MPDError.self) { try Self.parse(#"<Period><AdaptationSet><Representation id="a" bandwidth="1"><SegmentTemplate media="$Nope$"/></Representation></AdaptationSet></Period>"#) }
    }

    /// §5.3.9.1: a Representation inherits its AdaptationSet's and Period's segment information,
    /// its own attributes and children winning; BaseURL resolves level by level (§5.6.4).
    @Test func inheritanceAndBaseURLs() throws {
        let mpd = try Self.parse("""
            <BaseURL>https://origin.example/root/</BaseURL>
            <Period id="p" start="PT10S"><BaseURL>period/</BaseURL>
              <SegmentTemplate timescale="48000" media="$RepresentationID$/$Number$.m4s" initialization="$RepresentationID$/init.mp4" startNumber="5"/>
              <AdaptationSet contentType="audio" frameRate="25"><BaseURL>audio/</BaseURL>
                <InbandEventStream schemeIdUri="www.nielsen.com:id3:v1" value="1"/>
                <ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="cbcs"/>
                <Representation id="lo" bandwidth="64000"><SegmentTemplate duration="96000"/></Representation>
                <Representation id="hi" bandwidth="128000"><BaseURL>https://other.example/x/</BaseURL>
                  <SegmentTemplate><SegmentTimeline><S t="100" d="48000" r="1"/></SegmentTimeline></SegmentTemplate></Representation>
              </AdaptationSet>
            </Period>
            """)
        let period = try #require(mpd.periods.first)
        #expect(period.start == 10 && period.duration == 2)   // to the presentation's end (12 s)
        let (low, high) = (period.adaptationSets[0].representations[0], period.adaptationSets[0].representations[1])
        #expect(low.baseURL == "https://origin.example/root/period/audio/")
        #expect(high.baseURL == "https://other.example/x/")
        #expect(low.declaresID3 && high.declaresID3 && low.frameRate == 25 && low.contentType == "audio")
        #expect(ContentProtection.method(of: low.protection) == "cbcs")
        let lowSegments = Array(SegmentEnumeration(representation: low, periodDuration: period.duration))
        #expect(lowSegments.map(\.uri) == ["https://origin.example/root/period/audio/lo/5.m4s"])
        #expect(SegmentEnumeration(representation: low, periodDuration: 2).initialization?.uri == "https://origin.example/root/period/audio/lo/init.mp4")
        let highSegments = Array(SegmentEnumeration(representation: high, periodDuration: 10))
        #expect(highSegments.map(\.number) == [5, 6] && highSegments.map(\.time) == [100, 48_100])
    }

    @Test func timelines() throws {
        func representation(_ timeline: String, extra: String = "") -> Representation {
            let text = #"<Period><AdaptationSet><Representation id="v" bandwidth="1"><SegmentTemplate timescale="10" \#(extra) media="$Time$"><SegmentTimeline>\#(timeline)</SegmentTimeline></SegmentTemplate></Representation></AdaptationSet></Period>"#
            return try! Self.parse(text).periods[0].adaptationSets[0].representations[0]
        }
        // r = -1 repeats until the next S@t, then until the Period's end.
        let open = representation(#"<S t="0" d="20" r="-1"/><S t="100" d="30" r="-1"/>"#)
        let segments = Array(SegmentEnumeration(representation: open, periodDuration: 19))
        #expect(segments.map(\.time) == [0, 20, 40, 60, 80, 100, 130, 160])
        #expect(segments.map(\.number) == Array(1...8))
        // S@n numbers its segments; a later S@t leaves a hole.
        let numbered = representation(#"<S t="0" d="10" r="1" n="40"/><S t="50" d="10"/>"#)
        #expect(Array(SegmentEnumeration(representation: numbered, periodDuration: nil)).map { [$0.number, $0.time] } == [[40, 0], [41, 10], [42, 50]])
        // From a time: those that end after it, without making the ones before.
        let late = Array(SegmentEnumeration(representation: open, periodDuration: 19, from: 11.5))
        #expect(late.map(\.time) == [100, 130, 160])
        // presentationTimeOffset: media time 1000 is the Period's start.
        let offset = representation(#"<S t="1000" d="20" r="2"/>"#, extra: #"presentationTimeOffset="1000""#)
        #expect(Array(SegmentEnumeration(representation: offset, periodDuration: nil)).map(\.start) == [0, 2, 4])
    }

    /// An `r` of 2^31 and a template without end cost nothing until segments are asked for; a
    /// time near the end of the range does not overflow.
    @Test func hugeTimelinesAreMadeLazily() throws {
        let text = #"<Period><AdaptationSet><Representation id="v" bandwidth="1"><SegmentTemplate timescale="1" media="$Number$"><SegmentTimeline><S t="0" d="2" r="2147483648"/><S t="9000000000000000" d="1000" r="-1"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet></Period>"#
        let representation = try Self.parse(text, attributes: #"type="dynamic" availabilityStartTime="2026-01-01T00:00:00Z""#).periods[0].adaptationSets[0].representations[0]
        let start = ContinuousClock.now
        let first = Array(SegmentEnumeration(representation: representation, periodDuration: nil).prefix(3))
        #expect(first.map(\.number) == [1, 2, 3])
        let near = Array(SegmentEnumeration(representation: representation, periodDuration: nil, from: 4_000_000_000, until: 4_000_000_010))
        #expect(near.map(\.time) == [4_000_000_000, 4_000_000_002, 4_000_000_004, 4_000_000_006, 4_000_000_008])
        #expect(near.first?.number == 2_000_000_001)
        // The last S repeats (r = -1) up to what the live clock makes available.
        let last = Array(SegmentEnumeration(representation: representation, periodDuration: nil, from: 9_000_000_000_000_500,
                                            until: 9_000_000_000_003_000))
        #expect(last.map(\.time) == [9_000_000_000_000_000, 9_000_000_000_001_000, 9_000_000_000_002_000])
        #expect(ContinuousClock.now - start < .seconds(1))
        // Past 2^53 is refused, so that no sum of MPD values can overflow.
        #expect(throws: MPDError.self) { try Self.parse(#"<Period><AdaptationSet><Representation id="v" bandwidth="1"><SegmentTemplate><SegmentTimeline><S t="99999999999999999" d="1"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet></Period>"#) }
    }

    /// No document type, hence no entity, internal or external: refused where the reader meets it.
    @Test func entitiesAndDocumentTypesAreRefused() {
        let laughs = """
            <?xml version="1.0"?><!DOCTYPE MPD [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
            <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]><MPD><BaseURL>&d;</BaseURL></MPD>
            """
        let external = #"<?xml version="1.0"?><!DOCTYPE MPD [<!ENTITY x SYSTEM "file:///etc/passwd">]><MPD><BaseURL>&x;</BaseURL></MPD>"#
        let lowerCase = #"<?xml version="1.0"?><!doctype MPD SYSTEM "http://127.0.0.1:9/x.dtd"><MPD/>"#
        for text in [laughs, external, lowerCase] {
            #expect(Self.reason(Array(text.utf8)) == .documentType)
        }
        #expect(Self.reason(Array("<MPD><Period".utf8)).map { if case .notXML = $0 { true } else { false } } == true)
        #expect(Self.reason(Array("<SmoothStreamingMedia/>".utf8)) == .notMPD("SmoothStreamingMedia"))
        #expect(Self.reason(Self.mpd("")) == .noPeriod)
    }

    /// An MPD is UTF-8: other bytes (the fuzzer's five that trapped FoundationXML among them), and
    /// an MPD declaring another encoding, are refused.
    @Test func onlyUTF8IsRead() {
        #expect(Self.reason([0x3C, 0xEE, 0x6E, 0x53, 0x65]) == .notUTF8(declared: nil))
        #expect(Self.reason(Array(#"<?xml version="1.0" encoding="ISO-8859-1"?><MPD/>"#.utf8)) == .notUTF8(declared: "ISO-8859-1"))
        #expect(Self.reason(Array(#"<?xml version='1.0' encoding='UTF-16'?><MPD/>"#.utf8)) == .notUTF8(declared: "UTF-16"))
        #expect(Self.reason([0xFF, 0xFE] + Array("<MPD/>".utf8)) == .notUTF8(declared: nil))
        // UTF-8, declared or not, with a byte order mark or not, is read.
        for prefix in ["", #"<?xml version="1.0" encoding="utf-8"?>"#, "\u{FEFF}<?xml version='1.0' encoding='UTF-8' ?>\n"] {
            #expect(Self.reason(Array((prefix + #"<MPD type="static"><Period/></MPD>"#).utf8)) == nil, "\(prefix)")
        }
    }

    /// A processing instruction (FoundationXML crashed on one without data, the fuzzer's
    /// `<?xmltf-82?>`) is stepped over, as a browser's parser does; text that only looks like one,
    /// in a comment or CDATA, is text.
    @Test func processingInstructionsAreSteppedOver() throws {
        let period = #"<Period><BaseURL>a/</BaseURL></Period>"#
        for text in ["<?xmltf-82?><MPD type='static'>\(period)</MPD>", #"<?xml version="1.0"?><MPD type="static"><?stop?>\#(period)</MPD><?x y?>"#,
                     "\u{FEFF}<?xml-stylesheet href='a'?><MPD type='static'>\(period)</MPD>"] {
            #expect(Self.reason(Array(text.utf8)) == nil, "\(text)")
        }
        let fine = #"<?xml version="1.0" encoding="UTF-8"?><!-- <?old?> <!DOCTYPE x> --><MPD type="static"><Period><BaseURL><![CDATA[<?no?>]]></BaseURL></Period></MPD>"#
        let mpd = try MPDParser.parse(Array(fine.utf8), location: "https://cdn.example/a.mpd")
        #expect(mpd.periods.count == 1)
    }

    /// What the reader takes from the XML: prefixes off element names, attributes as written
    /// (line ends in them made spaces), the five entities and character references in text and
    /// values, CDATA as it is, comments dropped.
    @Test func theXMLAnMPDIsWrittenIn() throws {
        let text = "<?xml version='1.0'?>\n<mpd:MPD xmlns:mpd='urn:mpeg:dash:schema:mpd:2011' xmlns:xlink=\"http://www.w3.org/1999/xlink\">"
            + "<mpd:Period xlink:href='https://ads.example/p?a=1&amp;b=2' id=\"p&#49;&#x32;\" title='a\r\nb\tc'>"
            + "<!-- a comment -->&lt;x&gt; &quot;&apos;<![CDATA[&amp;]]></mpd:Period ></mpd:MPD>\n"
        let root = try MPDDocument.parse(Array(text.utf8)).root
        #expect(root.name == "MPD" && root.children.map(\.name) == ["Period"])
        let period = try #require(root.children.first)
        #expect(period.xlinkHref == "https://ads.example/p?a=1&b=2")
        #expect(period.attribute("id") == "p12")
        #expect(period.attribute("title") == "a b c")
        #expect(period.text == "<x> \"'&amp;")
    }

    /// Not well-formed is an error with its line, whatever the fault; never a crash.
    @Test func malformedXMLSaysWhereAndWhy() {
        let cases: [(String, String)] = [
            ("<MPD>\n<Period>\n</MPD>", "</MPD> closes <Period>"),
            ("<MPD><Period></Period>", "<MPD> is not closed"),
            ("<MPD a='1' a='2'/>", "attribute a twice"),
            ("<MPD a=1/>", "not quoted"),
            ("<MPD a='1'b='2'/>", "no space before an attribute"),
            ("<MPD a='<'/>", "'<' in attribute"),
            ("<MPD>&nbsp;</MPD>", "unknown reference &nbsp;"),
            ("<MPD>&#0;</MPD>", "unknown reference &#0;"),
            ("<MPD>a & b</MPD>", "a '&' that starts no reference"),
            ("<MPD/><MPD/>", "content after the root"),
            ("x<MPD/>", "text before the root"),
            ("<MPD><!-- open</MPD>", "comment is not closed"),
            ("<MPD><![CDATA[x</MPD>", "CDATA section is not closed"),
            ("<MPD><1a/></MPD>", "without a valid name"),
            ("", "no root element"),
            ("</MPD>", "closes nothing"),
        ]
        for (text, words) in cases {
            guard case .notXML(let line, let detail)? = Self.reason(Array(text.utf8)) else {
                Issue.record("\(text): \(String(describing: Self.reason(Array(text.utf8))))")
                continue
            }
            #expect(detail?.contains(words) == true, "\(text): \(detail ?? "")")
            #expect(line == (text.hasPrefix("<MPD>\n") ? 3 : 1), "\(text)")
        }
    }

    /// A live MPD must say when its clock started, and a segment must last a millisecond at least:
    /// without either, "the segments that exist now" has no bound.
    @Test func unboundedTimingIsRefused() {
        #expect(Self.reason(Self.mpd("<Period/>", attributes: #"type="dynamic""#)) == .dynamicWithoutStart)
        let tiny = #"<Period><AdaptationSet><Representation id="a" bandwidth="1"><SegmentTemplate timescale="1000000000" duration="999" media="$Number$"/></Representation></AdaptationSet></Period>"#
        #expect(Self.reason(Self.mpd(tiny)) == .segmentTooShort(duration: 999, timescale: 1_000_000_000))
        let tinyS = #"<Period><AdaptationSet><SegmentTemplate timescale="90000"><SegmentTimeline><S d="89"/></SegmentTimeline></SegmentTemplate><Representation id="a" bandwidth="1"/></AdaptationSet></Period>"#
        #expect(Self.reason(Self.mpd(tinyS)) == .segmentTooShort(duration: 89, timescale: 90_000))
        // A millisecond is a segment.
        #expect(Self.reason(Self.mpd(tinyS.replacingOccurrences(of: #"d="89""#, with: #"d="90""#))) == nil)
    }

    @Test func treesAreBounded() {
        let many = Self.mpd("<Period>" + String(repeating: "<S/>", count: MPDDocument.maximumElements) + "</Period>")
        #expect(Self.reason(many) == .tooManyElements(MPDDocument.maximumElements))
        let deep = Self.mpd(String(repeating: "<a>", count: 40) + String(repeating: "</a>", count: 40))
        #expect(Self.reason(deep) == .tooDeep(MPDDocument.maximumDepth))
    }

    @Test func eventStreamsAndTiming() throws {
        let mpd = try Self.parse("""
            <UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-xsdate:2014" value="https://time.example/now"/>
            <UTCTiming schemeIdUri="urn:mpeg:dash:utc:direct:2014" value="2026-11-26T12:00:00Z"/>
            <Location>next.mpd</Location>
            <Period id="a"><EventStream schemeIdUri="https://aomedia.org/emsg/ID3" timescale="1000">
              <Event presentationTime="1500" id="3" contentEncoding="base64">SUQz BAAAAAAAAA==</Event>
              <Event presentationTime="2500" id="4">SUQzBAAAAAAAAA==</Event></EventStream></Period>
            <Period id="b" start="PT30S"/>
            """, attributes: #"type="dynamic" availabilityStartTime="2026-11-26T11:00:00" minimumUpdatePeriod="PT2S" timeShiftBufferDepth="PT1M""#)
        #expect(mpd.isDynamic && mpd.minimumUpdatePeriod == 2 && mpd.timeShiftBufferDepth == 60)
        #expect(mpd.availabilityStartTime == ProgramDateTime.parse("2026-11-26T11:00:00Z"))
        #expect(mpd.locations == ["https://cdn.example/live/next.mpd"])
        #expect(mpd.utcTimings.map(\.method) == [.httpDate(url: "https://time.example/now"), .direct(ProgramDateTime.parse("2026-11-26T12:00:00Z")!)])
        #expect(mpd.periods.map(\.start) == [0, 30] && mpd.periods[0].duration == 30 && mpd.periods[1].duration == nil)
        let events = mpd.periods[0].eventStreams[0].events
        #expect(events.map(\.messageData) == [Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 0], Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 0]])
        #expect(events[0].note == nil && events[1].note?.contains("read as base64") == true)
    }

    /// A segment index: subsegments laid end to end after the sidx, each a byte range.
    @Test func segmentIndex() {
        func u32(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(value).bigEndian, Array.init) }
        let references = [(100, 48_000), (120, 48_000)].flatMap { u32($0.0) + u32($0.1) + u32(0x9000_0000) }
        let content = [0, 0, 0, 0] + u32(1) + u32(48_000) + u32(960) + u32(10) + [0, 0, 0, 2] + references
        let sidx = u32(8 + content.count) + Array("sidx".utf8) + content
        let index = SegmentIndex.parse(sidx, offset: 500)
        #expect(index?.timescale == 48_000)
        #expect(index?.references.map(\.range) == [ByteRange(offset: 500 + sidx.count + 10, length: 100), ByteRange(offset: 500 + sidx.count + 110, length: 120)])
        #expect(index?.references.map(\.time) == [960, 48_960])
        #expect(SegmentIndex.parse(Array(sidx.prefix(40)), offset: 0) == nil)
    }
}
