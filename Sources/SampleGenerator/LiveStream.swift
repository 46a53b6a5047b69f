import Foundation
import ID3Meter

/// An endless, deterministic live HLS stream for tests and benchmarks: segment n is computed
/// from n alone (spec-writer TS with a Nielsen tag about every `tagInterval` seconds, and
/// filler on a video PID to reach `bitrate`), and the playlist is a sliding window over the
/// segments published by `now`, as a live packager's is.
public struct LiveStream: Sendable {
    public var segmentDuration: Double
    public var tagInterval: Double
    public var windowSize: Int
    /// Segments in all; the playlist gets EXT-X-ENDLIST once the last is published.
    public var segmentCount: Int?
    public var startPTS: Int64
    /// Bits per second of the whole stream, filler included.
    public var bitrate: Int
    /// Media seconds per wall-clock second (100 plays a day in under 15 minutes).
    public var timeScale: Double
    public var frameRate = "29.970"
    public let startDate: Date
    /// Tells one channel of a line-up from another: its tags differ.
    public var seed: UInt64 = 0
    /// Segments that carry no tag, as when an encoder loses its watermark feed.
    public var untagged: Range<Int> = 0..<0
    /// Segments whose tags carry the placeholder PC CID (a source change the SDK has not yet
    /// identified): valid tags that credit nobody.
    public var placeholder: Range<Int> = 0..<0
    /// Segments the packager lists as `EXT-X-GAP` (its input failed): no media, 404 if asked for.
    public var gaps: Range<Int> = 0..<0
    /// A low-latency packager's playlist (LL-HLS): its last two segments and the one being made
    /// listed as partial segments too (never served), blocking reloads (`_HLS_msn`: the answer
    /// held until that segment is published, three target durations at most) and, with
    /// `skipUntil`, delta updates (`_HLS_skip=YES`: segments older than that many seconds from
    /// the end left out).
    public var lowLatency = false
    public var skipUntil: Double?

    /// A packager or origin restart at segment `at`: the window starts afresh there, its media
    /// sequence `shift` from the segments' own numbers (the content, its names and PTS go on),
    /// and the discontinuity sequence, when given, steps from one value to the other.
    public struct Restart: Sendable {
        public var at: Int
        public var shift: Int
        public var discontinuitySequence: (before: Int, after: Int)?

        public init(at: Int, shift: Int, discontinuitySequence: (before: Int, after: Int)? = nil) {
            self.at = at
            self.shift = shift
            self.discontinuitySequence = discontinuitySequence
        }
    }

    public var restart: Restart?

    /// An HLS interstitial the playlist schedules at the start of segment `atSegment`.
    public struct Break: Sendable {
        public var id: String
        public var atSegment: Int
        public var assetURI: String
        /// `X-ASSET-LIST` names `assetURI` instead of `X-ASSET-URI`.
        public var isAssetList: Bool
        /// `X-RESUME-OFFSET`; `nil` leaves it out.
        public var resumeOffset: Double?

        public init(id: String, atSegment: Int, assetURI: String, isAssetList: Bool = false, resumeOffset: Double? = 0) {
            self.id = id
            self.atSegment = atSegment
            self.assetURI = assetURI
            self.isAssetList = isAssetList
            self.resumeOffset = resumeOffset
        }
    }

    /// Interstitials, listed from the start (a packager lists a break once it is decided).
    public var breaks: [Break] = []
    /// While this many segments are published, the playlist shows EXT-X-ENDLIST though the
    /// stream goes on: a packager's glitch.
    public var endListGlitch: Range<Int>?

    public init(segmentDuration: Double = 2, tagInterval: Double = 1, windowSize: Int = 5, segmentCount: Int? = nil,
                startPTS: Int64 = 900_000, bitrate: Int = 200_000, timeScale: Double = 1, startDate: Date = Date()) {
        self.segmentDuration = segmentDuration
        self.tagInterval = tagInterval
        self.windowSize = windowSize
        self.segmentCount = segmentCount
        self.startPTS = startPTS
        self.bitrate = bitrate
        self.timeScale = timeScale
        self.startDate = startDate
    }

    private var segmentTicks: Int64 { Int64(segmentDuration * 90_000) }

    /// The Nielsen tags of segment `index`, in order: PTS (33-bit, wrapping) and owner.
    public func tags(inSegment index: Int) -> [(pts: Int64, owner: String)] {
        guard !untagged.contains(index), !gaps.contains(index) else { return [] }
        var factory = NielsenTagFactory(seed: 1_000 &+ UInt64(index) &+ seed &* 1_000_003)
        let count = max(1, Int((segmentDuration / tagInterval).rounded(.down)))
        return (0..<count).map { k in
            let offset = Int64((Double(k) * tagInterval + tagInterval / 3) * 90_000)
            let pts = PTS.asCarried(startPTS + Int64(index) * segmentTicks + offset)
            let mediaSeconds = Int(Double(index) * segmentDuration + Double(k) * tagInterval)
            return (pts, factory.owner(secondsIntoDay: 36_000 + mediaSeconds, placeholder: placeholder.contains(index)))
        }
    }

    public func segment(_ index: Int) -> [UInt8] {
        var writer = TransportStreamWriter(fillerPID: true)
        var bytes = writer.programTables()
        let firstPTS = PTS.asCarried(startPTS + Int64(index) * segmentTicks)
        let frameTicks: Int64 = 3_003
        let frames = Int(segmentTicks / frameTicks)
        let fillerPerFrame = max(0, Int(Double(bitrate) / 8 * segmentDuration) / max(frames, 1) - 20)
        var tags = tags(inSegment: index)[...]
        for frame in 0..<frames {
            let pts = PTS.asCarried(firstPTS + Int64(frame) * frameTicks)
            bytes += writer.filler(pts: pts, size: fillerPerFrame)
            while let tag = tags.first, PTS.distance(from: pts, to: tag.pts) < frameTicks {
                let id3 = ID3TagSpec(frames: [.priv(owner: tag.owner, data: [0x41])], extraFlags: 0x20).bytes()
                bytes += writer.pes(pts: tag.pts, payload: id3)
                tags.removeFirst()
            }
        }
        return bytes
    }

    /// Segments whose whole duration has passed by `date` (media time runs `timeScale` times faster).
    public func publishedCount(at date: Date) -> Int {
        let published = Int((date.timeIntervalSince(startDate) * timeScale / segmentDuration).rounded(.down))
        return min(max(published, 0), segmentCount ?? .max)
    }

    public func playlist(at date: Date, skipping: Bool = false) -> String {
        let published = publishedCount(at: date)
        var first = max(0, published - windowSize)
        var sequence = first
        var discontinuity: Int?
        if let restart {
            let after = published > restart.at
            if after { first = max(first, restart.at) }
            sequence = first + (after ? restart.shift : 0)
            discontinuity = restart.discontinuitySequence.map { after ? $0.after : $0.before }
        }
        var lines = ["#EXTM3U", "#EXT-X-VERSION:\(lowLatency ? 9 : 3)", "#EXT-X-TARGETDURATION:\(Int(segmentDuration.rounded(.up)))",
                     "#EXT-X-MEDIA-SEQUENCE:\(sequence)"]
        let part = segmentDuration / 4
        if lowLatency {
            lines.append("#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES" + (skipUntil.map { String(format: ",CAN-SKIP-UNTIL=%.1f", $0) } ?? "")
                + String(format: ",PART-HOLD-BACK=%.3f", 3 * part))
            lines.append(String(format: "#EXT-X-PART-INF:PART-TARGET=%.3f", part))
        }
        if let discontinuity { lines.append("#EXT-X-DISCONTINUITY-SEQUENCE:\(discontinuity)") }
        for scheduled in breaks {
            let start = ProgramDateTime.format(startDate.addingTimeInterval(Double(scheduled.atSegment) * segmentDuration))
            lines.append("#EXT-X-DATERANGE:ID=\"\(scheduled.id)\",CLASS=\"com.apple.hls.interstitial\",START-DATE=\"\(start)\","
                + (scheduled.isAssetList ? "X-ASSET-LIST" : "X-ASSET-URI") + "=\"\(scheduled.assetURI)\"" + (scheduled.resumeOffset.map { String(format: ",X-RESUME-OFFSET=%.3f", $0) } ?? ""))
        }
        var listedFrom = first
        if lowLatency, skipping, let skipUntil {
            listedFrom = max(first, published - Int((skipUntil / segmentDuration).rounded(.up)))
            lines.append("#EXT-X-SKIP:SKIPPED-SEGMENTS=\(listedFrom - first)")
        }
        func parts(of index: Int, count: Int) -> [String] {
            (0..<count).map { String(format: "#EXT-X-PART:DURATION=%.3f,URI=\"seg\(index).part\($0).ts\"", part) + ($0 == 0 ? ",INDEPENDENT=YES" : "") }
        }
        for index in listedFrom..<published {
            let date = startDate.addingTimeInterval(Double(index) * segmentDuration)
            lines += ["#EXT-X-PROGRAM-DATE-TIME:\(ProgramDateTime.format(date))"] + (gaps.contains(index) ? ["#EXT-X-GAP"] : [])
                + (lowLatency && index >= published - 2 ? parts(of: index, count: 4) : [])
                + [String(format: "#EXTINF:%.3f,", segmentDuration), "seg\(index).ts"]
        }
        if lowLatency, segmentCount.map({ published < $0 }) ?? true {
            // The segment being made: its parts so far, and the next one's hint.
            let made = Int((date.timeIntervalSince(startDate) * timeScale / part).rounded(.down)) % 4
            lines += parts(of: published, count: made) + ["#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"seg\(published).part\(made).ts\""]
        }
        if let count = segmentCount, published >= count { lines.append("#EXT-X-ENDLIST") }
        if endListGlitch?.contains(published) == true { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }

    public var masterPlaylist: String {
        "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=\(bitrate),FRAME-RATE=\(frameRate)\nlive.m3u8\n"
    }

    /// Answers `master.m3u8`, `live.m3u8` and the published `segN.ts`; 404 otherwise.
    public func respond(to request: LocalHTTPServer.Request, at date: Date = Date()) -> LocalHTTPServer.Response {
        switch request.path {
        case "master.m3u8": return LocalHTTPServer.Response(body: Array(masterPlaylist.utf8), contentType: "application/vnd.apple.mpegurl")
        case "live.m3u8":
            var date = date
            if lowLatency, let text = request.query["_HLS_msn"], let wanted = Int(text), publishedCount(at: date) <= wanted,
               segmentCount.map({ publishedCount(at: date) < $0 }) ?? true {
                // Held until segment `wanted` is published, three target durations at most; an ended stream answers at once.
                let due = startDate.addingTimeInterval(Double(wanted + 1) * segmentDuration / timeScale + 0.001)
                let wake = min(due, date.addingTimeInterval(3 * segmentDuration.rounded(.up) / timeScale))
                Thread.sleep(until: wake)
                date = max(date, Date())
            }
            let text = playlist(at: date, skipping: request.query["_HLS_skip"] == "YES")
            return LocalHTTPServer.Response(body: Array(text.utf8), contentType: "application/vnd.apple.mpegurl")
        default:
            guard request.path.hasPrefix("seg"), request.path.hasSuffix(".ts"),
                  let index = Int(request.path.dropFirst(3).dropLast(3)), index < publishedCount(at: date), !gaps.contains(index) else {
                return .notFound
            }
            return LocalHTTPServer.Response(body: segment(index), contentType: "video/mp2t")
        }
    }
}
