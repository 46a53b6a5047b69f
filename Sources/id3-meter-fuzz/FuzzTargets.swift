// libFuzzer harnesses for the parsers that read untrusted bytes, and for the command line's
// numbers. One binary, the target chosen by FUZZ_TARGET (id3, nielsen, playlist, reference,
// steering, packed, emsg, ts, segments, mpd, options, cookies, inflate, assetlist, records, hours). Built with `make fuzz` (-sanitize=fuzzer,address and
// -DFUZZING), libFuzzer supplies main; in an ordinary build this is a replayer that runs each
// file named on the command line through the target, for regression tests of past findings.
import Foundation
import ID3Meter
import ID3MeterCommands
import ID3MeterReport
import ID3MeterServe

enum FuzzTarget: String, CaseIterable {
    case id3, nielsen, playlist, reference, steering, packed, emsg, ts, segments, mpd, options, cookies, inflate, assetlist, records, hours

    func run(_ bytes: [UInt8]) {
        switch self {
        case .id3:
            // The packet parser, whole and as FFmpeg 5.1 cuts it.
            for tag in ID3PacketParser.parse(bytes).tags {
                _ = tag.privFrames.compactMap { NielsenTag(owner: $0.owner) }
            }
        case .hours:
            // The collector's stored hours as a report reads them back (one text, a line an
            // hour): an hour read is written again as the same text's hour.
            let text = String(decoding: bytes, as: UTF8.self)
            for hour in (CoverageHour.lines(text) ?? [:]).values + [CoverageHour(hour: 0, text: text)].compactMap({ $0 }) {
                guard CoverageHour(hour: hour.hour, text: hour.text) == hour else { fatalError("\(hour) read back otherwise") }
            }
        case .records:
            // Record lines as the report reads them from files: folded into coverage minutes, each
            // channel's first day analysed, its numbers held to what they can be, and every day's
            // page drawn; the next day as the report sees it before it has begun: nothing on air.
            let files = RecordFiles(bytes: Data(bytes), name: "fuzz")
            let builder = CoverageBuilder(calendar: ReportCalendar(zone: TimeZone(identifier: "UTC")!), now: 4_102_444_800)
            var days: [ChannelDay] = []
            for span in files.channels() {
                let day = builder.calendar.day(of: span.firstAt)
                guard let bounds = builder.calendar.bounds(of: day) else { fatalError("no bounds for \(day)") }
                let since = bounds.lowerBound - ChannelDayInput.notableLookback
                let coverage = files.coverage(channel: span.channel, minutes: [CoverageMinute.minute(of: bounds.lowerBound) - 1..<CoverageMinute.minute(of: bounds.upperBound) + 1])
                let notable = files.notable(channel: span.channel, from: since, to: bounds.upperBound)
                for result in builder.days(of: span, [(day, bounds)], coverage: coverage, notable: notable, notableSince: since) {
                    guard result.creditedMinutes <= result.onAirMinutes, result.strip.reduce(0, { $0 + $1.minutes }) == 1_440,
                          result.gaps.allSatisfy({ $0.seconds >= 30 && !$0.causes.isEmpty }) else {
                        fatalError("\(result)")
                    }
                    _ = result.gaps.map(\.causes)
                    days.append(result)
                }
                let before = CoverageBuilder(calendar: builder.calendar, now: bounds.upperBound - 1)
                let next = (day: "next", bounds: bounds.upperBound..<bounds.upperBound + 86_400)
                for result in before.days(of: span, [next], coverage: coverage, notable: notable, notableSince: since) where result.onAirMinutes != 0 {
                    fatalError("a day not begun on air: \(result)")
                }
            }
            _ = CoverageReport(generated: "", timeZone: "UTC", days: Array(Set(days.map(\.day))), source: "fuzz", channels: days).html()
            // The same bytes as a batch posted to the collector: what it takes is what it keeps.
            if let batch = try? bytes.withUnsafeBytes({ try BatchBody.batch(in: $0, by: "fuzz", at: 0) }) {
                for collected in batch.records {
                    let names = [collected.record.channel, collected.record.meter].compactMap { $0 }
                    guard CoverageMinute.times.contains(collected.record.sentAt),
                          names.allSatisfy({ !$0.unicodeScalars.contains("\u{0}") && $0.unicodeScalars.elementsEqual($0.precomposedStringWithCanonicalMapping.unicodeScalars) }),
                          (try? JSONDecoder().decode(MeterRecord.self, from: Data(collected.json.utf8))) == collected.record else {
                        fatalError("kept \(collected.json) as \(collected.record)")
                    }
                }
            }
        case .nielsen:
            if let tag = NielsenTag(owner: "www.nielsen.com" + String(decoding: bytes, as: UTF8.self)) {
                _ = tag.issues.map(\.description)
            }
        case .playlist:
            _ = try? PlaylistParser.parse(String(decoding: bytes, as: UTF8.self), location: "http://fuzz/a/index.m3u8")
        case .reference:
            // A playlist from a server and from a disk, every reference resolved and put to the rule.
            let text = String(decoding: bytes, as: UTF8.self)
            for location in ["http://fuzz/a/index.m3u8", "/fuzz/a/index.m3u8"] {
                for reference in Self.references(in: try? PlaylistParser.parse(text, location: location)) {
                    Self.checkRule(reference, from: location)
                }
            }
        case .steering:
            // A content-steering server's answer: bounded, its TTL in range, its next URI resolved.
            if let manifest = try? SteeringManifest.parse(bytes) {
                guard (1...86_400).contains(manifest.timeToLive), manifest.pathwayPriority.count <= 1_000 else {
                    fatalError("a TTL of \(manifest.timeToLive) s, \(manifest.pathwayPriority.count) pathways")
                }
                _ = manifest.reloadURI.map { Location.resolve($0, against: "http://fuzz/steer.json") }
            }
        case .packed:
            // A packed audio segment: frame walking, resynchronisation, tags and their times; whole and in pieces.
            Self.readWholeAndInPieces(.packedAudio, bytes)
        case .emsg:
            // fMP4: boxes, init segment timescales, tfdt, emsg v0/v1 and the ID3 inside; whole and in
            // pieces; and a resource's segment index, looked for and read as the DASH walk does.
            Self.readWholeAndInPieces(.fragmentedMP4, bytes)
            if let found = SegmentIndex.locate(in: bytes), found.offset < bytes.count {
                _ = SegmentIndex.parse(Array(bytes[found.offset..<min(found.end, bytes.count)]), offset: found.offset)
            }
        case .ts:
            // MPEG-TS: sync, PSI sections, PES and tags joined across them; whole and in pieces.
            Self.readWholeAndInPieces(.transportStream, bytes)
        case .segments:
            // A playlist's segments: the bytes as three sub-ranges of one resource, each
            // segment's form told on its own, MPEG-TS state and cut packets carried across; read
            // again with the middle segment restarted halfway, as a retry does: the same events.
            let once = Self.readAsSegments(bytes, restartingAt: nil)
            guard once == Self.readAsSegments(bytes, restartingAt: bytes.count / 2) else {
                fatalError("a restarted segment changed the events")
            }
        case .mpd:
            // An MPD from a server and from a disk: parsed under its bounds, each Representation's
            // first segments made (lazily: an r of 2^31 costs nothing) from its start and from a
            // live edge, every URI put to the reference rule as the walk puts it.
            for location in ["http://fuzz/a/manifest.mpd", "/fuzz/a/manifest.mpd"] {
                guard let mpd = try? MPDParser.parse(bytes, location: location) else { continue }
                for period in mpd.periods {
                    for representation in period.adaptationSets.flatMap(\.representations) {
                        let starts = SegmentEnumeration(representation: representation, periodDuration: period.duration).prefix(20)
                        let edge = SegmentEnumeration(representation: representation, periodDuration: period.duration, from: 1e6, until: 1e6 + 60)
                        for segment in Array(starts) + Array(edge.prefix(20)) {
                            guard segment.start.isFinite, segment.seconds.isFinite, segment.seconds > 0 else {
                                fatalError("segment \(segment.number) of \(representation.id) at \(segment.start) for \(segment.seconds) s")
                            }
                            Self.checkRule(segment.uri, from: location)
                        }
                    }
                }
            }
        case .cookies:
            // Set-Cookie values from a CDN, a line each, kept and sent back: bounded whatever they say.
            let jar = CookieJar()
            let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
            jar.store(lines, from: URL(string: "https://cdn.fuzz.example/live/a/master.m3u8")!)
            guard jar.count <= CookieJar.maximumCookies else { fatalError("\(jar.count) cookies kept") }
            for url in ["https://cdn.fuzz.example/live/a/x.ts", "http://fuzz.example/", "https://other.example/live/"] {
                let header = jar.header(for: URL(string: url)!) ?? ""
                guard header.utf8.count <= CookieJar.maximumCookies * (CookieJar.maximumCookieBytes + 2), !header.contains(where: \.isNewline) else {
                    fatalError("a Cookie header of \(header.utf8.count) bytes")
                }
            }
        case .inflate:
            // A body said to be gzip: decoded in bounded pieces, the same whole or in two, stopped at a limit.
            func decoded(cuttingAt cut: Int) -> [UInt8]? {
                guard let decoding = try? ContentDecoding(encoding: "gzip") else { return nil }
                var out: [UInt8] = []
                let consume: (UnsafeBufferPointer<UInt8>) throws(FetchError) -> Void = { piece throws(FetchError) in
                    guard piece.count <= ContentDecoding.pieceSize else { fatalError("a piece of \(piece.count) bytes") }
                    out += piece
                    if out.count > 1 << 20 { throw FetchError.tooLarge(.playlist, limit: 1 << 20, declared: nil) }
                }
                do {
                    try bytes[..<cut].withUnsafeBytes { try decoding.decode($0, consume: consume) }
                    try bytes[cut...].withUnsafeBytes { try decoding.decode($0, consume: consume) }
                } catch {
                    return nil
                }
                return out
            }
            let whole = decoded(cuttingAt: bytes.count), split = decoded(cuttingAt: bytes.count / 2)
            guard whole == split else { fatalError("cutting the body changed what it decodes to") }
        case .assetlist:
            // An interstitial's X-ASSET-LIST: a bounded number of assets, each resolved.
            if let assets = try? Interstitial.AssetList.parse(bytes, location: "https://fuzz/ads/list.json") {
                guard assets.count <= 100 else { fatalError("\(assets.count) assets") }
                assets.forEach { Self.checkRule($0, from: "https://fuzz/ads/list.json") }
            }
        case .options:
            // The command line's numbers: NUL-separated values for every numeric option of both
            // commands, parsed and validated as a user's would be, then turned into what a run uses.
            let values = bytes.split(separator: 0, omittingEmptySubsequences: false).prefix(12).map { String(decoding: $0, as: UTF8.self) }
            let meterOptions = ["--fps", "--duration", "--speed", "--live-start", "--timeout", "--fetch-deadline"]
            let scanOptions = ["--jobs", "--timeout", "--max-segment-size", "--max-playlist-size", "--max-init-size", "--max-lost-segments"]
            for (command, options) in [("meter", meterOptions), ("scan", scanOptions)] {
                let arguments = zip(options, values).flatMap { [$0, $1] }
                try? ID3MeterCommand.prepare([command] + arguments + ["fuzz.m3u8"])
            }
        }
    }

    /// What the rule lets `location` (a playlist or MPD) follow: from a remote one an http(s) URL
    /// with a host, opened as http(s) only; from a local one, that or a local file.
    static func checkRule(_ reference: String, from location: String) {
        guard ReferenceRule.refusal(of: reference, from: location) == nil else { return }
        let remote = ["http://", "https://"].contains { reference.lowercased().hasPrefix($0) }
        let local = !Location.hasScheme(reference) || reference.lowercased().hasPrefix("file:")
        guard location.hasPrefix("http") ? remote : remote || local else {
            fatalError("the rule let \(location) reference \(reference)")
        }
        guard !remote || ReferenceRule.protocols(for: reference) == "http,https,tls,tcp" else {
            fatalError("\(reference) may be opened with \(ReferenceRule.protocols(for: reference))")
        }
    }

    /// Every URI a playlist makes us follow.
    static func references(in playlist: Playlist?) -> [String] {
        switch playlist {
        case .master(let master): master.variants.map(\.uri) + master.renditions.compactMap(\.uri) + [master.steeringServer].compactMap { $0 }
        case .media(let media): media.segments.flatMap { [$0.uri] + [$0.key?.uri, $0.mapURI].compactMap { $0 } }
        case nil: []
        }
    }

    /// The extractor fed the bytes whole, then split in three: the events must be the same.
    static func readWholeAndInPieces(_ form: MediaForm, _ bytes: [UInt8]) {
        var whole: [String] = [], pieces: [String] = []
        var extractor = form.makeExtractor(origin: TagOrigin(source: "fuzz"))
        extractor.extract(bytes) { whole.append("\($0)") }
        extractor = form.makeExtractor(origin: TagOrigin(source: "fuzz"))
        extractor.extract(bytes, cutAt: [bytes.count / 3, bytes.count / 3 + 1]) { pieces.append("\($0)") }
        guard whole == pieces else { fatalError("chunking changed the events:\n\(whole)\n\(pieces)") }
    }

    /// The events of `bytes` read as three consecutive sub-ranges of one resource; with
    /// `restartingAt`, the middle one is fed up to that offset, then read again from its start
    /// from a copy of the extractor taken after `begin`.
    static func readAsSegments(_ bytes: [UInt8], restartingAt restart: Int?) -> [String] {
        var events: [String] = []
        var extractor = SegmentedExtractor(source: "fuzz")
        let cuts = [0, bytes.count / 3, 2 * bytes.count / 3, bytes.count]
        for (number, (start, end)) in zip(cuts, cuts.dropFirst()).enumerated() {
            let origin = TagOrigin(source: "fuzz", segment: TagOrigin.Segment(uri: "fuzz.ts", mediaSequence: number))
            extractor.begin(origin, range: ByteRange(offset: start, length: end - start), initSegment: nil) { events.append("\($0)") }
            if number == 1, let restart, restart > start {
                let saved = extractor
                bytes[start..<min(restart, end)].withUnsafeBufferPointer { extractor.feed($0) { _ in } }
                extractor = saved
            }
            bytes[start..<end].withUnsafeBufferPointer { extractor.feed($0) { events.append("\($0)") } }
            _ = extractor.end(keepingCut: true) { events.append("\($0)") }
        }
        extractor.finish { events.append("\($0)") }
        return events
    }

    static var current: FuzzTarget {
        ProcessInfo.processInfo.environment["FUZZ_TARGET"].flatMap(FuzzTarget.init) ?? .id3
    }
}

@main
enum FuzzMain {
    static func main() {
        #if FUZZING
        runLibFuzzer()
        #else
        let target = FuzzTarget.current
        for path in CommandLine.arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("cannot read \(path)\n".utf8))
                exit(1)
            }
            target.run([UInt8](data))
        }
        print("\(target.rawValue): \(CommandLine.arguments.count - 1) inputs replayed")
        #endif
    }
}

#if FUZZING
private let target = FuzzTarget.current

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                                 _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                                 _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// libFuzzer's own driver (flags, corpus, crash files), with our target as the callback.
private func runLibFuzzer() {
    var argc = CommandLine.argc
    var argv = Optional(CommandLine.unsafeArgv)
    exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        target.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
    })
}
#endif
