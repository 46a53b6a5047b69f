import ArgumentParser
import Foundation
import HummingbirdTLS
import ID3MeterServe

/// A listener only this machine reaches: judged on addresses, never on a name's letters
/// (`127.attacker.example` is a name like any other). A name is resolved, and every address it
/// stands for must be a loopback one; one that does not resolve is not loopback.
enum Loopback {
    static func contains(_ host: String) -> Bool {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &found) == 0, let first = found else { return false }
        defer { freeaddrinfo(first) }
        return sequence(first: first) { $0.pointee.ai_next }.allSatisfy { entry in
            guard let address = entry.pointee.ai_addr else { return false }
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) >> 24 == 127 }
            case AF_INET6:
                return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
                    let bytes = withUnsafeBytes(of: ipv6.pointee.sin6_addr) { Array($0) }
                    let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
                    return bytes == Array(repeating: 0, count: 15) + [1] || (mapped && bytes[12] == 127)
                }
            default:
                return false
            }
        }
    }
}

/// Where a command listens when `--listen` is not given: `serve`'s API and `collect` differ, so
/// that both can run on one host as they come.
protocol ListenerDefault {
    static var listen: String { get }
}

enum ServeListener: ListenerDefault { static let listen = "127.0.0.1:9464" }
enum CollectListener: ListenerDefault { static let listen = "127.0.0.1:9470" }

/// How an HTTP listener of ours (`serve`'s API, `collect`) listens and whom it lets in: a
/// control plane, so each limit has a flag.
struct APIOptions<Default: ListenerDefault>: ParsableArguments {
    @Option(help: ArgumentHelp("Address to listen on: HOST:PORT (port 0 picks a free one; stderr says which).",
                               valueName: "host:port"))
    var listen = Default.listen

    @Option(help: ArgumentHelp(
        "Tokens for the API, one a line: 'NAME read|write TOKEN' (or the lines in ID3METER_API_TOKENS). With them, every request but GET /healthz, /readyz and /metrics needs 'Authorization: Bearer TOKEN' (or the token as HTTP Basic's password); a read token cannot change the line-up. Without them the API must listen on loopback.",
        valueName: "file"))
    var apiTokens: String?

    @Option(help: ArgumentHelp("The API over TLS: a PEM certificate (chain) file; needs --api-tls-key.", valueName: "file"))
    var apiTlsCert: String?

    @Option(help: ArgumentHelp("The PEM private key of --api-tls-cert.", valueName: "file"))
    var apiTlsKey: String?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Connections the API holds at once (1 to 100000); past it, the one idle longest is closed, and when none is idle one of 8 places kept for /healthz, /readyz and /metrics is taken, so a probe always finds one.",
        valueName: "count"))
    var apiMaxConnections = 1_000

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Seconds a connection to the API has to send a whole request (head and body) after opening or its last answer; then it is closed (1 to 3600).",
        valueName: "seconds"))
    var apiTimeout = 15.0

    /// `--listen` taken apart.
    var address: (host: String, port: Int)? {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
              (0...65_535).contains(port) else { return nil }
        let host = listen[..<colon].trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return host.isEmpty ? nil : (host, port)
    }

    /// The listener's URL once it listens on `port` (an IPv6 address in brackets).
    func url(tls: Bool, port: Int) -> String {
        let host = address?.host ?? listen
        return "http\(tls ? "s" : "")://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    func validate() throws {
        guard address != nil else { throw ValidationError("--listen must be HOST:PORT with a port from 0 to 65535, not '\(listen)'") }
        try NumberCheck.check(apiMaxConnections, "--api-max-connections", in: 1...100_000)
        try NumberCheck.check(apiTimeout, "--api-timeout", in: 1...3_600, unit: " seconds")
        guard (apiTlsCert == nil) == (apiTlsKey == nil) else { throw ValidationError("--api-tls-cert and --api-tls-key go together") }
    }


    /// The API's tokens: `--api-tokens FILE`, else ID3METER_API_TOKENS; `nil` when neither is given.
    func loadTokens() throws(ConfigError) -> APITokens? {
        if let apiTokens { return try APITokens.load(apiTokens) }
        let variable = ProcessInfo.processInfo.environment["ID3METER_API_TOKENS"]
        return try variable.flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }.map { text throws(ConfigError) in
            try APITokens(text, source: "ID3METER_API_TOKENS")
        }
    }

    /// The tokens, checked: a listener without them must be on loopback, since anyone who
    /// reached it could do `what` ("read and change the line-up"); `lines` is the token file's
    /// form to suggest. A file that cannot be used, or a listener it would leave open, is said
    /// and the exit status is 1.
    func checkedTokens(anyoneCould what: String, lines: String) throws -> APITokens? {
        let tokens: APITokens?
        do { tokens = try loadTokens() } catch {
            Console.error("--api-tokens: \(error)")
            throw ExitCode.failure
        }
        guard tokens != nil || Loopback.contains(address!.host) else {
            Console.error("--listen \(listen) would let anyone who reaches it \(what): give --api-tokens FILE "
                          + "(lines '\(lines)') or ID3METER_API_TOKENS, or listen on 127.0.0.1")
            throw ExitCode.failure
        }
        return tokens
    }

    func policy(tokens: APITokens?, maximumChannels: Int, schemes: [String] = []) -> APIPolicy {
        var policy = APIPolicy(tokens: tokens)
        policy.schemes.formUnion(schemes.map { $0.lowercased() })
        policy.maximumChannels = maximumChannels
        policy.maximumConnections = apiMaxConnections
        policy.requestTimeout = apiTimeout
        return policy
    }

    /// The listener's TLS, from `--api-tls-cert` and `--api-tls-key`; `nil` for plain HTTP. A
    /// file that cannot be used is said, and the exit status is 1.
    func tlsConfiguration() throws -> TLSConfiguration? {
        guard let apiTlsCert, let apiTlsKey else { return nil }
        let chain: [NIOSSLCertificate], key: NIOSSLPrivateKey
        do { chain = try NIOSSLCertificate.fromPEMFile(apiTlsCert) } catch {
            Console.error("--api-tls-cert \(apiTlsCert): not a readable PEM certificate file (\(error))")
            throw ExitCode.failure
        }
        do { key = try NIOSSLPrivateKey(file: apiTlsKey, format: .pem) } catch {
            Console.error("--api-tls-key \(apiTlsKey): not a readable PEM private key file (\(error))")
            throw ExitCode.failure
        }
        guard !chain.isEmpty else {
            Console.error("--api-tls-cert \(apiTlsCert): holds no certificate")
            throw ExitCode.failure
        }
        return TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }
}
