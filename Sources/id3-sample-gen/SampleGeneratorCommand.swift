import ArgumentParser
import Foundation
import SampleGenerator

@main
struct SampleGeneratorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "id3-sample-gen",
        abstract: "Write id3-meter's samples, or serve a synthetic live HLS stream.",
        subcommands: [WriteSamples.self, ServeLive.self, ServeLiveDASH.self, ServeLineup.self, ServeCollector.self, WriteFuzzSeeds.self,
                      WriteDenseCorpus.self],
        defaultSubcommand: WriteSamples.self)
}

struct WriteSamples: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write",
        abstract: "Write the sample TS files and HLS streams, each with the list of tags written into it.",
        discussion: """
            The libavformat samples remux base audio/video TS files (make them with the ffmpeg CLI; \
            `make samples` does) and add a timed-ID3 stream through libavformat's MPEG-TS muxer. \
            The spec samples come from an independent MPEG-TS writer. Beside each sample, \
            NAME.expected.jsonl lists every ID3 frame written, in order: tests compare against it.
            """)

    @Option(help: "Folder to write the samples into.")
    var output = "samples"

    @Option(help: "A 40 s audio/video MPEG-TS file to remux.")
    var longBase: String

    @Option(help: "A 20 s audio/video MPEG-TS file to remux.")
    var shortBase: String

    @Option(help: "Folder with tone.FORMAT elementary streams (adts, mp3, ac3, eac3) and their ffprobe packet lists.")
    var audio: String?

    @Option(help: "Folder with an fMP4 HLS from the ffmpeg CLI (init.mp4, seg*.m4s, index.m3u8) and ffprobe's first dts per segment.")
    var fmp4: String?

    func run() throws {
        let output = URL(fileURLWithPath: output)
        try SampleSet(output: output, longBase: longBase, shortBase: shortBase).writeAll()
        if let audio { try PackedAudioSamples(audio: URL(fileURLWithPath: audio), output: output).write() }
        if let fmp4 { try FragmentedMP4Samples(media: URL(fileURLWithPath: fmp4), output: output).write() }
    }
}

struct WriteDenseCorpus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dense-corpus",
        abstract: "Write a long low-bitrate MPEG-TS with a Nielsen tag every --tag-interval seconds, for benchmarks.",
        discussion: """
            OUTPUT gets --segments segments of the synthetic live stream back to back; with \
            --untagged, the same bytes' length without any tag (to subtract the demux cost). \
            --folder also writes them as segN.ts files. Prints the number of Nielsen tags written.
            """)

    @Argument(help: "The file to write.") var output: String
    @Option(help: "Segments in all.") var segments = 6_000
    @Option(help: "Seconds per segment.") var segmentDuration = 10.0
    @Option(help: "Seconds between Nielsen tags.") var tagInterval = 1.0
    @Option(help: "Bits per second, filler included.") var bitrate = 64_000
    @Flag(help: "Write no tags.") var untagged = false
    @Option(help: "Also write each segment as FOLDER/segN.ts.") var folder: String?

    func run() throws {
        var stream = LiveStream(segmentDuration: segmentDuration, tagInterval: tagInterval, segmentCount: segments,
                                bitrate: bitrate, startDate: .distantPast)
        if untagged { stream.untagged = 0..<segments }
        guard FileManager.default.createFile(atPath: output, contents: nil), let file = FileHandle(forWritingAtPath: output) else {
            throw ValidationError("cannot write \(output)")
        }
        if let folder { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        var tags = 0
        var counters = [UInt8](repeating: 0, count: 8192)
        for index in 0..<segments {
            var packets = stream.segment(index)
            // Each segment starts its continuity counters at 0; back to back they must run on.
            for start in stride(from: 0, to: packets.count - 187, by: 188) where packets[start + 3] & 0x10 != 0 {
                let pid = Int(packets[start + 1] & 0x1F) << 8 | Int(packets[start + 2])
                packets[start + 3] = packets[start + 3] & 0xF0 | counters[pid]
                counters[pid] = (counters[pid] + 1) & 0x0F
            }
            let bytes = Data(packets)
            file.write(bytes)
            if let folder { try bytes.write(to: URL(fileURLWithPath: folder).appendingPathComponent(String(format: "seg%05d.ts", index))) }
            tags += stream.tags(inSegment: index).count
        }
        try file.close()
        print(tags)
    }
}

struct ServeLive: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve-live",
        abstract: "Serve an endless (or --segments long) live HLS stream on 127.0.0.1: master.m3u8, live.m3u8, segN.ts.",
        discussion: "Prints the master playlist's URL on stdout, then serves until killed (or --segments are out plus 30 s).")

    @Option(help: "Port (0: any free one).") var port: UInt16 = 0
    @Option(help: "Seconds per segment.") var segmentDuration = 2.0
    @Option(help: "Seconds between Nielsen tags.") var tagInterval = 1.0
    @Option(help: "Segments in the sliding window.") var window = 6
    @Option(help: "Segments in all, then EXT-X-ENDLIST.") var segments: Int?
    @Option(help: "Stream bitrate in bits per second (filler on a video PID).") var bitrate = 5_000_000
    @Option(help: "Media seconds per wall-clock second.") var timeScale = 1.0
    @Option(help: "First PTS, in 90 kHz ticks.") var startPts: Int64 = 900_000

    func run() throws {
        let stream = LiveStream(segmentDuration: segmentDuration, tagInterval: tagInterval, windowSize: window,
                                segmentCount: segments, startPTS: startPts, bitrate: bitrate, timeScale: timeScale)
        let server = try LocalHTTPServer(port: port) { stream.respond(to: $0) }
        FileHandle.standardOutput.write(Data((server.url("master.m3u8") + "\n").utf8))
        if let segments {
            Thread.sleep(forTimeInterval: Double(segments) * segmentDuration / timeScale + 30)
        } else {
            while true { Thread.sleep(forTimeInterval: 3_600) }
        }
        server.stop()
    }
}

struct ServeLiveDASH: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve-live-dash",
        abstract: "Serve an endless (or --segments long) live MPEG-DASH stream on 127.0.0.1: live.mpd, time, a/init.mp4, a/segN.m4s.",
        discussion: """
            The tags are serve-live's, as emsg v1 boxes in the audio segments. Prints the MPD's URL on stdout, then serves until \
            killed (or --segments are out plus 30 s).
            """)

    @Option(help: "Port (0: any free one).") var port: UInt16 = 0
    @Option(help: "Seconds per segment.") var segmentDuration = 2.0
    @Option(help: "Seconds between Nielsen tags.") var tagInterval = 1.0
    @Option(help: "Segments in the time-shift buffer.") var window = 6
    @Option(help: "Segments in all, then the MPD ends the presentation.") var segments: Int?
    @Option(help: "Seconds the server's clock (its MPD and UTCTiming) is ahead of this machine's (negative: behind).")
    var clockOffset = 0.0
    @Option(help: "A second Period starts at this segment.") var periodAt: Int?
    @Flag(help: "SegmentTimeline and $Time$ names instead of @duration and $Number$.") var timeline = false

    func run() throws {
        var stream = LiveDASHStream(schedule: LiveStream(segmentDuration: segmentDuration, tagInterval: tagInterval, windowSize: window,
                                                         segmentCount: segments))
        stream.clockOffset = clockOffset
        stream.periodAt = periodAt
        stream.timeline = timeline
        let server = try LocalHTTPServer(port: port) { [stream] in stream.respond(to: $0) }
        FileHandle.standardOutput.write(Data((server.url("live.mpd") + "\n").utf8))
        if let segments {
            Thread.sleep(forTimeInterval: Double(segments) * segmentDuration + 30)
        } else {
            while true { Thread.sleep(forTimeInterval: 3_600) }
        }
        server.stop()
    }
}

struct ServeLineup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve-lineup",
        abstract: "Serve N distinct live channels on one 127.0.0.1 port: cI/master.m3u8, cI/live.m3u8, cI/segN.ts.",
        discussion: """
            Channel I's tags differ from every other channel's. Writes a line-up config for \
            'id3-meter serve' to --config, prints the base URL on stdout, then serves until killed.
            """)

    @Option(help: "Channels.") var channels = 100
    @Option(help: "Seconds per segment.") var segmentDuration = 2.0
    @Option(help: "Seconds between Nielsen tags.") var tagInterval = 1.0
    @Option(help: "Segments in the sliding window.") var window = 6
    @Option(help: "Stream bitrate in bits per second (filler on a video PID).") var bitrate = 128_000
    @Option(help: "Seconds of stream already out at start, so the window is full.") var preroll = 12.0
    @Option(help: "Write an 'id3-meter serve' config of the channels here.") var config: String?
    @Option(help: "Variants in each master playlist (vK/live.m3u8, the same stream at K+1 times the bitrate's bandwidth).")
    var renditions = 1
    @Option(help: "The config's audit_renditions, in minutes (0: none).") var auditRenditions = 0.0

    func run() throws {
        let start = Date().addingTimeInterval(-preroll)
        let (renditions, bitrate) = (renditions, bitrate)
        let streams = (0..<channels).map { index in
            var stream = LiveStream(segmentDuration: segmentDuration, tagInterval: tagInterval, windowSize: window,
                                    bitrate: bitrate, startDate: start)
            stream.seed = UInt64(index)
            return stream
        }
        let server = try LocalHTTPServer { request in
            let parts = request.path.split(separator: "/", maxSplits: 1)
            guard parts.count == 2, parts[0].hasPrefix("c"), let index = Int(parts[0].dropFirst()), streams.indices.contains(index) else {
                return .notFound
            }
            var inner = request
            inner.path = String(parts[1])
            // A ladder: every variant the same stream, under a folder of its own.
            if renditions > 1 {
                if inner.path == "master.m3u8" {
                    let master = "#EXTM3U\n" + (0..<renditions).map { variant in
                        "#EXT-X-STREAM-INF:BANDWIDTH=\(bitrate * (variant + 1)),FRAME-RATE=29.970\nv\(variant)/live.m3u8\n"
                    }.joined()
                    return LocalHTTPServer.Response(body: Array(master.utf8), contentType: "application/vnd.apple.mpegurl")
                }
                inner.path = String(inner.path.split(separator: "/", maxSplits: 1).last ?? "")
            }
            return streams[index].respond(to: inner)
        }
        if let config {
            let audit = auditRenditions > 0 ? ", audit_renditions: \(auditRenditions)" : ""
            let lines = ["channels:"] + (0..<channels).map { "  - {name: c\($0), url: \"\(server.url("c\($0)/master.m3u8"))\"\(audit)}" }
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: config))
        }
        FileHandle.standardOutput.write(Data((server.baseURL + "\n").utf8))
        while true { Thread.sleep(forTimeInterval: 3_600) }
    }
}

struct ServeCollector: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve-collector",
        abstract: "Serve a meter-record collector on 127.0.0.1 that can be down for a while; accepted records go to a file.",
        discussion: "Prints the collector's URL on stdout. Answers 503 from --down-at for --down-for seconds, 204 otherwise.")

    @Option(help: "File the accepted records are appended to, one JSON line each.") var records: String
    @Option(help: "Seconds after start when the outage begins.") var downAt = 10.0
    @Option(help: "Seconds the outage lasts.") var downFor = 30.0
    @Option(help: "Seconds to serve in all.") var lifetime = 120.0

    func run() throws {
        _ = FileManager.default.createFile(atPath: records, contents: nil)
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: records))
        let start = Date()
        let (downAt, downFor) = (downAt, downFor)
        let server = try LocalHTTPServer { request in
            let elapsed = Date().timeIntervalSince(start)
            guard request.method == "POST", !(downAt..<downAt + downFor).contains(elapsed),
                  let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
                  let batch = body["records"] as? [Any] else { return LocalHTTPServer.Response(status: 503) }
            for record in batch {
                if let line = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]) {
                    file.write(line + Data("\n".utf8))
                }
            }
            return LocalHTTPServer.Response(status: 204)
        }
        FileHandle.standardOutput.write(Data((server.url("collect") + "\n").utf8))
        Thread.sleep(forTimeInterval: lifetime)
        server.stop()
    }
}

struct WriteFuzzSeeds: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seeds", abstract: "Write starting inputs for the fuzzers (id3/, nielsen/, playlist/).")

    @Option(help: "Folder to write into.") var output: String
    @Option(help: "The samples folder, for its playlists.") var samples = "samples"

    func run() throws {
        try FuzzSeeds.write(to: URL(fileURLWithPath: output), samples: URL(fileURLWithPath: samples))
    }
}
