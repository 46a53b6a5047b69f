import ArgumentParser
import Foundation
import ID3Meter
import Logging
import ServiceLifecycle
import Synchronization

struct MeterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meter",
        abstract: "Meter a live or VOD HLS or MPEG-DASH stream in real time: sendID3 for each Nielsen tag when playback reaches it.",
        discussion: """
            Plays INPUT the way a player would: joins a live stream near its edge, follows the \
            playlist as it slides (an MPD as it is refreshed, on the server's clock from its \
            UTCTiming), and runs a frame clock at the stream's declared frame rate (the variant's \
            FRAME-RATE or the MPD's video frameRate, else the video's, else --fps, else 29.97). An \
            MPD's tags come from emsg boxes (the ID3 schemes) and its own EventStreams; the \
            Representation read is the one that declares them, else the first that carries them. Each Nielsen tag \
            goes to the reference DTVR engine when the playhead reaches its PTS; every delivery \
            and engine event is written as a record: a readable line on a terminal, JSON lines \
            otherwise (sent_at, pts, payload, media_sequence, segment, program_date_time, ...; \
            program and pid for MPEG-TS, interstitial for a tag of an HLS interstitial's asset).

            Each stream is a player session: the cookies its servers set are kept and sent where \
            they apply, EXT-X-DEFINE variables substituted, playlists asked compressed, and HLS \
            interstitials (EXT-X-DATERANGE CLASS="com.apple.hls.interstitial") played in their \
            place, the primary content they replace not delivered. A name that does not say what \
            the input is (a packager's .isml/.m3u8) is settled by the server's Content-Type and \
            first bytes. A multi-program MPEG-TS is read by --program, or when one program alone \
            carries timed ID3; one in which several do is refused, naming them.

            HTTPS trusts the system's authorities and those of --ca-file (SSL_CERT_FILE or \
            SSL_CERT_DIR replace the system's); --client-cert presents a client certificate; \
            https_proxy, http_proxy and no_proxy (or --proxy) route requests through a proxy. A \
            refused certificate is said in words: untrusted, expired, for another name.

            With --state DIR (and --output or --collector), a restarted meter starts at the \
            segment of the last tag its records hold and sends nothing up to it again; when that \
            segment has left the live window it joins at the edge, and a 'resume' record says \
            how many seconds were lost.

            A live playlist whose media sequence goes back (an origin restart) is read on from \
            its first segment not read yet, and a jump further than the stream could have gone is \
            taken as a renumbering, not a loss: both are warnings. Segments that left the live \
            window unread are an error (exit 1).

            Ends at EXT-X-ENDLIST or the end of a static or ended MPD (unlike serve, which opens a live channel again), once --duration seconds of the stream have played, or on SIGINT/SIGTERM (the engine's end() is \
            called and the outputs flushed). Exit status: 0 when the input was read (one without \
            timed ID3 is a warning), 1 when it or a segment could not be read or bytes were skipped \
            as damaged, or an output had to drop records (its 'loss' record says which), 2 on a \
            usage error.
            """)

    @Argument(help: ArgumentHelp(
        "An HLS playlist (master or media, live or VOD, local or http/https); an MPEG-DASH MPD (.mpd, static or dynamic); an MPEG-TS, packed audio (AAC, MP3, AC-3, E-AC-3) or fragmented MP4 file or http(s) URL; or a udp://, srt://, rtp:// or tcp:// MPEG-TS stream.",
        valueName: "input"))
    var input: String

    @Option(help: "Channel name for play() (default: from the URL).")
    var channel: String?

    @Option(help: "DTVR ad model for loadMetadata(): 1 linear, 2 dynamic.")
    var adModel = "1"

    @Option(help: "Output style: jsonl or text (default: text on a terminal, jsonl otherwise).")
    var format: OutputStyle?

    @OptionGroup var records: RecordOptions

    @Option(parsing: .unconditional, help: "Frame rate when the stream declares none (1 to 300).")
    var fps: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Playback speed: 1 is real time (0.01 to 1000), 'max' is no waiting.", valueName: "x|max"))
    var speed = PlaybackSpeed.factor(1)

    @Option(parsing: .unconditional, help: "Stop once this many seconds of the stream have played (up to 10 years; a stall does not count).")
    var duration: Double?

    @Option(parsing: .unconditional, help: "Segments back from the live edge to start at (1 to 1000).")
    var liveStart = 3

    @OptionGroup(title: "Fetching") var fetch: FetchOptions

    @Option(help: "App id for the engine.") var appId = "PXXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX"
    @Option(help: "App name for the engine.") var appName = "id3-meter"
    @Option(help: "App version for the engine.") var appVersion = "1.0"

    @Flag(help: "Show libav's messages and the engine's notices.")
    var verbose = false

    func validate() throws {
        if let problem = Location.problem(withInput: input) { throw ValidationError(problem) }
        guard ["1", "2"].contains(adModel) else { throw ValidationError("--ad-model must be 1 or 2") }
        try NumberCheck.check(fps, "--fps", in: FrameRateChoice.allowedRates)
        try NumberCheck.check(duration, "--duration", in: 0.001...315_360_000, unit: " seconds")
        if case .factor(let factor) = speed { try NumberCheck.check(factor, "--speed", in: 0.01...1_000) }
        try NumberCheck.check(liveStart, "--live-start", in: 1...1_000)
    }

    var stopAfter: Duration? { duration.map { Duration.seconds($0) } }

    /// The values the run derives from the numbers on the command line, made without running.
    func prepare() {
        _ = (fetch.fetcher(), stopAfter, FrameRateChoice(info: nil, option: fps).framesPerSecond, speed)
    }

    /// The delivery to resume after, when the state recovered one of this input.
    func resumePoint(_ recovered: ResumePoints?) -> ResumePoint? {
        guard let point = recovered?.byChannel[""] else { return nil }
        guard point.input == input else {
            Console.warning("--state \(records.state ?? ""): its last delivery is of \(point.input), not \(input); starting afresh")
            return nil
        }
        return point
    }

    func run() async throws {
        try await fetch.withConnections { try await run(through: $0) }
    }

    private func run(through connections: HTTPConnections) async throws {
        var logger = Logger(label: "id3-meter")
        logger.logLevel = verbose ? .debug : .warning
        LibAVLog.route(to: verbose ? logger : nil)

        let style = format ?? (isatty(STDOUT_FILENO) != 0 ? .text : .jsonl)
        let records = try self.records.open(standardOutputLines: style.line)
        let engine = await ReferenceEngine(appInfo: ReferenceEngine.AppInfo(appID: appId, appName: appName, appVersion: appVersion),
                                           outputs: [records.set], logger: logger)
        let meter = StreamMeter(input: input, session: MeteringSession(channelName: channel ?? MeteringSession.channelName(for: input),
                                                                       adModel: adModel),
                                scanner: TagScanner(variant: fetch.variant, programs: fetch.programs, fetcher: fetch.fetcher(through: connections)),
                                liveStart: liveStart,
                                frameRateOption: fps, pace: speed.pace, stopAfter: stopAfter,
                                resume: resumePoint(records.recovered))

        let failures = Atomic(0)
        // The records outlive the metering: the stream's end, or SIGINT or SIGTERM, shuts the
        // group down in reverse, the engine's session ended before the outputs flush.
        let metering = MeteringService { [logger] in
            // The failure that ended the reading is said and counted as the others are.
            for await event in meter.events(engine: engine).caught({ .read(.failure($0)) }) {
                switch event {
                case .frameRate(let choice):
                    let line = "frame clock at \(String(format: "%.3f", choice.framesPerSecond)) fps (\(choice.origin == .option ? "--fps" : "\(choice.origin)"))"
                    choice.rejected.forEach { Console.warning("\(input): \($0); not used") }
                    if choice.origin == .fallback { logger.warning("\(line)") } else { logger.info("\(line)") }
                case .read(.warning(let warning)):
                    Console.warning(FlagHint.words(warning))
                    // Which copy of the stream the records came from, and when that changed.
                    if case .switchedPath = warning.kind { await records.set.write(.warning(warning.kind.description, channel: nil, at: Date())) }
                case .read(.failure(let failure)):
                    failures.add(1, ordering: .relaxed)
                    Console.error(FlagHint.words(failure))
                    // A segment or reload given up on is a record too, for what reads them to count.
                    if let record = MeterRecord.fetchFailed(failure, channel: nil, at: Date()) { await records.set.write(record) }
                case .read(.malformed(let error, let pts, let origin)):
                    logger.warning("malformed ID3 in \(origin.segment?.uri ?? origin.source) at pts \(pts.map(String.init) ?? "none"): \(error)")
                case .read(.resumed(let resumption)):
                    guard let point = meter.resume else { break }
                    let record = MeterRecord.resume(resumption, from: point, at: Date())
                    await records.set.write(record)
                    printError("\(input): \(record.message ?? "")")
                case .read(.opened), .read(.tag), .read(.segment), .read(.mediaTime), .delivered, .stalled:
                    break
                }
            }
        }
        try await ServiceGroup(configuration: .init(
            services: [.init(service: records), .init(service: metering, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)).run()
        // An output that had to drop records failed its run, though the others have them.
        let lost = records.set.recordsLost
        let failed = failures.load(ordering: .relaxed)
        printError("\(await engine.delivered) tags sent, \(await engine.suppressed) suppressed, \(failed) failure\(failed == 1 ? "" : "s")"
                   + (lost > 0 ? ", \(lost) record\(lost == 1 ? "" : "s") lost by an output" : ""))
        if failed > 0 || lost > 0 { throw ExitCode.failure }
    }
}

/// One stream metered as a service: it returns when the stream ends, and is cancelled (its
/// engine's session ended) when the group shuts down.
private struct MeteringService: Service {
    let body: @Sendable () async -> Void

    func run() async {
        await cancelWhenGracefulShutdown(body)
    }
}

enum OutputStyle: String, ExpressibleByArgument, CaseIterable {
    case jsonl, text

    /// The line stdout gets for a record.
    var line: @Sendable (MeterRecord) -> [UInt8] {
        switch self {
        case .jsonl: { $0.jsonLine }
        case .text: RecordText.line
        }
    }
}

enum PlaybackSpeed: ExpressibleByArgument, CustomStringConvertible {
    case factor(Double)
    case maximum

    var pace: StreamMeter.Pace {
        switch self {
        case .factor(let factor): .realTime(speed: factor)
        case .maximum: .noWaiting
        }
    }

    init?(argument: String) {
        if argument == "max" { self = .maximum; return }
        guard let factor = Double(argument) else { return nil }
        self = .factor(factor)
    }

    var description: String {
        switch self {
        case .factor(let factor): String(factor)
        case .maximum: "max"
        }
    }
}
