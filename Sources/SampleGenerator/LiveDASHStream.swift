import Foundation
import ID3MeterCore

/// A synthetic live MPEG-DASH presentation, published in real time: a dynamic MPD
/// (`live.mpd`) refreshed every segment, an audio Representation whose fMP4 segments carry
/// `LiveStream`'s Nielsen tags as emsg v1 boxes (the same tags, the same PTS: one ground truth
/// for HLS and DASH), a video Representation that declares the frame rate, `UTCTiming` pointing
/// at the server's clock (`time`), which may differ from the machine's by `clockOffset`.
public struct LiveDASHStream: Sendable {
    /// The tag schedule, segment duration, window and end.
    public var schedule: LiveStream
    /// The server's clock minus the real one: its MPD and its `time` answer speak its own clock.
    public var clockOffset: Double = 0
    /// From this segment on, a second Period (as an ad break or a programme change makes one),
    /// listed one segment before it starts.
    public var periodAt: Int?
    /// `SegmentTimeline` with `$Time$` names, instead of `@duration` with `$Number$`.
    public var timeline = false
    /// Segments that answer 404 though published (a packager's glitch).
    public var missing: Range<Int> = 0..<0
    /// `suggestedPresentationDelay`: how far behind the edge players are to play.
    public var presentationDelay: Double?
    /// How `time` tells the server's clock.
    public var timing = Timing.iso
    /// Low-latency publishing: a segment is out this many seconds before its end (its
    /// `availabilityTimeOffset`), its last bytes sent as its end comes.
    public var availabilityTimeOffset = 0.0

    public enum Timing: Sendable {
        /// `http-iso`: the body is the time, to the millisecond.
        case iso
        /// `http-head`: the `Date` header of a HEAD request, to the second.
        case head
    }

    public init(schedule: LiveStream) {
        self.schedule = schedule
    }

    private var segmentTicks: Int { Int(schedule.segmentDuration * 90_000) }

    /// The server's clock at real time `date`.
    public func serverTime(at date: Date) -> Date { date.addingTimeInterval(clockOffset) }

    /// The segments out at `date`, the one still growing included.
    private func publishedCount(at date: Date) -> Int { schedule.publishedCount(at: date.addingTimeInterval(availabilityTimeOffset)) }

    public func mpd(at date: Date) -> String {
        let published = publishedCount(at: date)
        let ended = schedule.segmentCount.map { published >= $0 } ?? false
        let duration = schedule.segmentDuration
        let window = Double(schedule.windowSize) * duration
        var attributes = [
            #"type="dynamic""#, #"profiles="urn:mpeg:dash:profile:isoff-live:2011""#,
            #"availabilityStartTime="\#(ProgramDateTime.format(serverTime(at: schedule.startDate)))""#,
            #"publishTime="\#(ProgramDateTime.format(serverTime(at: date)))""#,
            #"timeShiftBufferDepth="PT\#(window)S""#, #"maxSegmentDuration="PT\#(duration)S""#, #"minBufferTime="PT\#(duration)S""#,
        ]
        if let presentationDelay { attributes.append(#"suggestedPresentationDelay="PT\#(presentationDelay)S""#) }
        if ended, let count = schedule.segmentCount {
            attributes.append(#"mediaPresentationDuration="PT\#(Double(count) * duration)S""#)
        } else {
            attributes.append(#"minimumUpdatePeriod="PT\#(duration)S""#)
        }
        var periods = [period(id: "p0", first: 0, until: periodAt.map { min($0, published) } ?? published, published: published)]
        if let periodAt, published + 1 >= periodAt {
            periods.append(period(id: "p1", first: periodAt, until: max(published, periodAt), published: published))
        }
        return #"<?xml version="1.0" encoding="utf-8"?>"# + "\n"
            + #"<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" \#(attributes.joined(separator: " "))>"# + "\n"
            + periods.joined(separator: "\n") + "\n"
            + #"  <UTCTiming schemeIdUri="urn:mpeg:dash:utc:\#(timing == .iso ? "http-iso" : "http-head"):2014" value="time"/>"# + "\n</MPD>\n"
    }

    /// A Period from segment `first`; its timeline lists its segments before `until` that are in the window.
    private func period(id: String, first: Int, until: Int, published: Int) -> String {
        let start = Double(first) * schedule.segmentDuration
        let offset = Int(schedule.startPTS) + first * segmentTicks
        let addressing: String
        // Half the offset on the template, half on a BaseURL: a client adds them.
        let early = availabilityTimeOffset > 0 ? #" availabilityTimeOffset="\#(availabilityTimeOffset / 2)" availabilityTimeComplete="false""# : ""
        if timeline {
            let from = max(first, published - schedule.windowSize)
            let entries = until > from ? #"<S t="\#(Int(schedule.startPTS) + from * segmentTicks)" d="\#(segmentTicks)" r="\#(until - from - 1)"/>"# : ""
            addressing = #"<SegmentTemplate\#(early) timescale="90000" presentationTimeOffset="\#(offset)" startNumber="\#(first)" media="$RepresentationID$/t$Time$.m4s" initialization="$RepresentationID$/init.mp4"><SegmentTimeline>\#(entries)</SegmentTimeline></SegmentTemplate>"#
        } else {
            addressing = #"<SegmentTemplate\#(early) timescale="90000" presentationTimeOffset="\#(offset)" startNumber="\#(first)" duration="\#(segmentTicks)" media="$RepresentationID$/seg$Number$.m4s" initialization="$RepresentationID$/init.mp4"/>"#
        }
        return """
              <Period id="\(id)" start="PT\(start)S">\(availabilityTimeOffset > 0 ? "<BaseURL availabilityTimeOffset=\"\(availabilityTimeOffset / 2)\">./</BaseURL>" : "")
                <AdaptationSet contentType="video" mimeType="video/mp4" frameRate="30000/1001">
                  <Representation id="v" bandwidth="\(schedule.bitrate)" codecs="avc1.4d401e">\(addressing)</Representation>
                </AdaptationSet>
                <AdaptationSet contentType="audio" mimeType="audio/mp4">
                  <InbandEventStream schemeIdUri="www.nielsen.com:id3:v1" value="1"/>
                  <Representation id="a" bandwidth="64000" codecs="mp4a.40.2">\(addressing)</Representation>
                </AdaptationSet>
              </Period>
            """
    }

    /// The audio track's initialisation segment: one track (ID 1) at 90 kHz.
    public var initSegment: [UInt8] {
        let tkhd = Self.box("tkhd", [0, 0, 0, 7] + Self.be(0, 4) + Self.be(0, 4) + Self.be(1, 4) + [UInt8](repeating: 0, count: 68))
        let mdhd = Self.box("mdhd", [0, 0, 0, 0] + Self.be(0, 4) + Self.be(0, 4) + Self.be(90_000, 4) + Self.be(0, 4) + [0x55, 0xC4, 0, 0])
        let moov = Self.box("moov", Self.box("mvhd", [0, 0, 0, 0] + Self.be(0, 8) + Self.be(90_000, 4) + [UInt8](repeating: 0, count: 84))
            + Self.box("trak", tkhd + Self.box("mdia", mdhd)))
        return Self.box("ftyp", Array("iso6".utf8) + Self.be(0, 4) + Array("iso6dash".utf8)) + moov
    }

    /// Segment `index`: its tags as emsg v1 (90 kHz), then a fragment whose tfdt is its start.
    public func segment(_ index: Int) -> [UInt8] {
        let start = Int(schedule.startPTS) + index * segmentTicks
        var bytes = Self.box("styp", Array("msdh".utf8) + Self.be(0, 4) + Array("msdhmsix".utf8))
        for (number, tag) in schedule.tags(inSegment: index).enumerated() {
            let id3 = ID3TagSpec(frames: [.priv(owner: tag.owner, data: [0x41])]).bytes()
            bytes += FragmentedMP4Samples.emsg(version: 1, scheme: "www.nielsen.com:id3:v1", value: "1", timescale: 90_000,
                                               time: Int(tag.pts), id: index * 100 + number, data: id3)
        }
        let traf = Self.box("traf", Self.box("tfhd", [0, 2, 0, 0] + Self.be(1, 4)) + Self.box("tfdt", [1, 0, 0, 0] + Self.be(start, 8)))
        bytes += Self.box("moof", Self.box("mfhd", [0, 0, 0, 0] + Self.be(index + 1, 4)) + traf)
        let filler = max(0, Int(Double(schedule.bitrate) / 8 * schedule.segmentDuration) / 8)
        return bytes + Self.box("mdat", [UInt8](repeating: 0, count: filler))
    }

    /// The index of the segment a request names (`seg12.m4s`, `t1980000.m4s`), if it is published and not missing.
    public func index(of name: Substring, at date: Date) -> Int? {
        let number: Int?
        if name.hasPrefix("seg"), name.hasSuffix(".m4s") { number = Int(name.dropFirst(3).dropLast(4)) } else if name.hasPrefix("t"), name.hasSuffix(".m4s"),
            let time = Int(name.dropFirst().dropLast(4)), (time - Int(schedule.startPTS)) % segmentTicks == 0 {
            number = (time - Int(schedule.startPTS)) / segmentTicks
        } else { number = nil }
        guard let number, number >= 0, number < publishedCount(at: date), !missing.contains(number) else { return nil }
        return number
    }

    /// Answers `live.mpd`, `time`, `a/init.mp4` and the published `a/segN.m4s` (or `a/tT.m4s`); 404 otherwise.
    public func respond(to request: LocalHTTPServer.Request, at date: Date = Date()) -> LocalHTTPServer.Response {
        switch request.path {
        case "live.mpd": return LocalHTTPServer.Response(body: Array(mpd(at: date).utf8), contentType: "application/dash+xml")
        case "time" where timing == .head:
            return LocalHTTPServer.Response(contentType: "text/plain", headers: ["Date": Self.httpDate(serverTime(at: date))])
        case "time": return LocalHTTPServer.Response(body: Array(ProgramDateTime.format(serverTime(at: date)).utf8), contentType: "text/plain")
        case "a/init.mp4": return LocalHTTPServer.Response(body: initSegment, contentType: "video/mp4")
        default:
            guard request.path.hasPrefix("a/"), let index = index(of: request.path.dropFirst(2), at: date) else { return .notFound }
            let bytes = segment(index)
            let end = schedule.startDate.addingTimeInterval(Double(index + 1) * schedule.segmentDuration / schedule.timeScale)
            guard end > date else { return LocalHTTPServer.Response(body: bytes, contentType: "video/mp4") }
            // Still growing: what is written so far now, its media data when its end comes (the
            // body delimited by the connection's close, as a chunked one is by its last chunk).
            let written = bytes.count - Self.mediaDataLength(of: bytes)
            return LocalHTTPServer.Response(body: Array(bytes[..<written]), contentType: "video/mp4", length: .none) { send in
                Thread.sleep(until: end)
                _ = send(Array(bytes[written...]))
            }
        }
    }

    /// IMF-fixdate, as an HTTP server writes `Date`.
    static func httpDate(_ date: Date) -> String {
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "GMT")
        format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return format.string(from: date)
    }

    /// The length of the last box of a segment this stream wrote: its `mdat`.
    private static func mediaDataLength(of segment: [UInt8]) -> Int {
        var offset = 0
        var last = 0
        while offset + 8 <= segment.count {
            last = segment[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard last >= 8 else { break }
            offset += last
        }
        return last
    }

    static func box(_ type: String, _ content: [UInt8]) -> [UInt8] { be(8 + content.count, 4) + Array(type.utf8) + content }
    static func be(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
}
