import ArgumentParser
import Foundation
import ID3Meter

/// How an input is fetched: which variant, what headers, how long and how much a fetch may
/// take. The same flags, and the same help, for `scan` and the meter.
struct FetchOptions: ParsableArguments {
    private static let defaults = Fetcher.Limits()

    @Option(help: ArgumentHelp("Variant of a master playlist (or Representation of an MPD) to read: lowest, highest (bandwidth), or its position from 0.", valueName: "choice"))
    var variant = VariantChoice.lowestBandwidth

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Program of a multi-program MPEG-TS (its program_number) to read; by default scan reads every program, the meter the one that carries timed ID3.",
        valueName: "number"))
    var program: Int?

    @Option(parsing: .unconditional, help: "Seconds to wait on a silent network read (0.001 to 86400).")
    var timeout = 10.0

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Seconds one playlist, segment, key or init section fetch may take in all (default: 3 target durations, at least \(Int(Fetcher.Limits.minimumDeadline))).",
        valueName: "seconds"))
    var fetchDeadline: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Largest segment read (K, M, G).", valueName: "size"))
    var maxSegmentSize = ByteSize(bytes: defaults.maximumSegmentBytes)

    @Option(parsing: .unconditional, help: ArgumentHelp("Largest playlist or MPD read.", valueName: "size"))
    var maxPlaylistSize = ByteSize(bytes: defaults.maximumPlaylistBytes)

    @Option(parsing: .unconditional, help: ArgumentHelp("Largest initialisation section (EXT-X-MAP, DASH Initialization) or segment index read.", valueName: "size"))
    var maxInitSize = ByteSize(bytes: defaults.maximumInitBytes)

    @Option(parsing: .unconditional, help: ArgumentHelp("Largest AES-128 key response read.", valueName: "size"))
    var maxKeySize = ByteSize(bytes: defaults.maximumKeyBytes)

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Segments lost in a row after which a VOD playlist is given up (a live one is followed on, with an error).",
        valueName: "count"))
    var maxLostSegments = defaults.maximumConsecutiveLostSegments

    @Option(name: .customLong("header"), parsing: .unconditionalSingleValue, help: ArgumentHelp(
        "An HTTP request header sent with every playlist, segment and key request, as 'Name: value' (repeatable; a token, a cookie, a user agent).",
        valueName: "header"))
    var headerLines: [String] = []

    /// The programs `--program` chooses: one, or every program (a meter reads every program
    /// as the one that carries timed ID3).
    var programs: ProgramSelection { program.map { .only($0) } ?? .all }

    @Option(name: .customLong("ca-file"), help: ArgumentHelp(
        "A PEM file of certificate authorities to trust besides the system's (repeatable): an origin with its company's own CA. SSL_CERT_FILE and SSL_CERT_DIR replace the system's, as for curl.",
        valueName: "file"))
    var caFiles: [String] = []

    @Option(help: ArgumentHelp("A client certificate (PEM, with its chain) for origins that ask for one (mutual TLS).", valueName: "file"))
    var clientCert: String?

    @Option(help: ArgumentHelp("The client certificate's private key (PEM; default: in --client-cert's file).", valueName: "file"))
    var clientKey: String?

    @Option(help: ArgumentHelp(
        "A forward proxy for every request, http://[user:password@]host:port (https through CONNECT); overrides https_proxy and http_proxy; no_proxy still applies.",
        valueName: "url"))
    var proxy: String?

    /// Trust and certificates: the environment's store, the `--ca-file`s, the client certificate.
    var tls: Fetcher.TLS {
        var tls = Fetcher.TLS.fromEnvironment()
        tls.caFiles = caFiles
        tls.clientCertificate = clientCert
        tls.clientKey = clientKey
        return tls
    }

    /// `--proxy`, else the environment's.
    var proxySettings: Fetcher.Proxy? { proxy.flatMap(Fetcher.Proxy.Server.init).map { Fetcher.Proxy(server: $0) } ?? Fetcher.Proxy.fromEnvironment() }

    func validate() throws {
        for file in caFiles + [clientCert, clientKey].compactMap({ $0 }) where !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("'\(file)' cannot be read (--ca-file, --client-cert and --client-key name PEM files)")
        }
        if clientKey != nil, clientCert == nil { throw ValidationError("--client-key needs --client-cert") }
        if let proxy, Fetcher.Proxy.Server(proxy) == nil {
            throw ValidationError("--proxy '\(proxy)' is not http://[user:password@]host[:port]")
        }
        for line in headerLines where Fetcher.Header(line) == nil {
            throw ValidationError("--header '\(line)' is not 'Name: value' (a name of letters, digits and -, one line)")
        }
        try NumberCheck.check(timeout, "--timeout", in: 0.001...86_400, unit: " seconds")
        try NumberCheck.check(fetchDeadline, "--fetch-deadline", in: 0.001...86_400, unit: " seconds")
        try NumberCheck.check(maxLostSegments, "--max-lost-segments", in: 1...1_000_000)
        try NumberCheck.check(program, "--program", in: 1...65_535)
        for (size, option) in [(maxSegmentSize, "--max-segment-size"), (maxPlaylistSize, "--max-playlist-size"),
                               (maxInitSize, "--max-init-size"), (maxKeySize, "--max-key-size")] {
            try NumberCheck.check(size.bytes, option, in: 16...(64 << 30))
        }
    }

    /// Runs `body` with HTTP connections of the command's own, shut down when it returns or
    /// throws: a command leaves no socket or event-loop thread behind, however it ends.
    func withConnections<T>(_ body: (HTTPConnections) async throws -> T) async throws -> T {
        // On the process's event loops, which serve's API server shares: no threads of their own.
        let connections = HTTPConnections(ioTimeout: .seconds(timeout), threads: nil)
        do {
            let result = try await body(connections)
            await connections.shutdown()
            return result
        } catch {
            await connections.shutdown()
            throw error
        }
    }

    /// The fetcher the options describe, through `connections` (the process's when `nil`).
    func fetcher(through connections: HTTPConnections? = nil) -> Fetcher {
        var limits = Fetcher.Limits()
        limits.maximumSegmentBytes = maxSegmentSize.bytes
        limits.maximumPlaylistBytes = maxPlaylistSize.bytes
        limits.maximumInitBytes = maxInitSize.bytes
        limits.maximumKeyBytes = maxKeySize.bytes
        limits.fetchDeadline = fetchDeadline.map { .seconds($0) }
        limits.maximumConsecutiveLostSegments = maxLostSegments
        var fetcher = Fetcher(ioTimeout: .seconds(timeout), limits: limits, headers: headerLines.compactMap(Fetcher.Header.init), connections: connections)
        fetcher.tls = tls
        fetcher.proxy = proxySettings
        return fetcher
    }
}
