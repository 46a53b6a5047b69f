import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import ID3MeterServe
import SampleGenerator

/// Origins inside a broadcaster's network: HTTPS with the company's own CA, client certificates,
/// an egress proxy. Real TLS servers and a real forward proxy on loopback
/// (scripts/tls_test_servers.py: Python's ssl and http.server), certificates made for the test by
/// a throwaway CA; the origin serves the fMP4 sample, whose tags its writer listed.
@Suite("Private origins: a company CA, client certificates, proxies", .serialized, .timeLimit(.minutes(3)))
struct PrivateOriginTests {
    static let script = Samples.root.appendingPathComponent("scripts/tls_test_servers.py").path

    /// A server the script runs, on the port it printed once it listened.
    final class Server: @unchecked Sendable {
        let process = Process()
        let port: Int
        let log = Pipe()

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = [PrivateOriginTests.script] + arguments
            let out = Pipe()
            process.standardOutput = out
            process.standardError = log
            try process.run()
            // No test keeps a server for minutes; one that never says its port is killed, which ends the read below.
            Command.watch(process, after: 180)
            var text = ""
            while !text.contains("\n"), case let chunk = out.fileHandleForReading.availableData, !chunk.isEmpty {
                text += String(decoding: chunk, as: UTF8.self)
            }
            guard let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw CancellationError() }
            self.port = port
        }

        func url(_ path: String, scheme: String = "https") -> String { "\(scheme)://127.0.0.1:\(port)/\(path)" }

        /// What it logged so far (the proxy: a line a request), once it is stopped.
        func stop() -> String {
            // SIGKILL: a test process may ignore SIGTERM (serve's tests do), and children inherit that.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
    }

    /// The test's CA and certificates, made afresh.
    static func certificates() throws -> URL {
        let folder = try Samples.temporaryFolder()
        let made = try Command.run([script, "certs", folder.path], binary: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(made.status == 0, "\(made.stderr)")
        return folder
    }

    static let sample = Samples.folder.appendingPathComponent("fmp4").path

    static func origin(_ certificates: URL, _ name: String, clientCA: Bool = false) throws -> Server {
        try Server(["origin", sample, certificates.appendingPathComponent("\(name).pem").path,
                    certificates.appendingPathComponent("\(name).key").path]
                   + (clientCA ? [certificates.appendingPathComponent("ca.pem").path] : []))
    }

    static func planted() throws -> [Command.Send] { try PlayerSessionTests.planted() }

    static func tlsFailure(_ events: [MediaEvent]) -> TLSFailure.Reason? {
        if case .tls(let failure)? = events.failures.first?.fetchError { failure.reason } else { nil }
    }

    @Test func aPrivateCAIsRefusedUntilTrustedAndEachBadCertificateSaysWhy() async throws {
        let certificates = try Self.certificates()
        defer { try? FileManager.default.removeItem(at: certificates) }
        let good = try Self.origin(certificates, "good"), expired = try Self.origin(certificates, "expired")
        let wrongName = try Self.origin(certificates, "wrong-name")
        defer { _ = (good.stop(), expired.stop(), wrongName.stop()) }
        let ca = certificates.appendingPathComponent("ca.pem").path

        let refused = await Samples.scan(good.url("index.m3u8"), fetcher: Fetcher(retry: .none))
        #expect(Self.tlsFailure(refused) == .unknownAuthority, "\(refused.failures)")
        var trusting = Fetcher(retry: .none)
        trusting.tls.caFiles = [ca]
        #expect(PlayerSessionTests.sends(await Samples.scan(good.url("index.m3u8"), fetcher: trusting)) == (try Self.planted()))
        #expect(Self.tlsFailure(await Samples.scan(expired.url("index.m3u8"), fetcher: trusting)) == .expired)
        #expect(Self.tlsFailure(await Samples.scan(wrongName.url("index.m3u8"), fetcher: trusting)) == .wrongName)
        // https:// to a server that speaks plain HTTP (and answers the TLS hello with a 400).
        let plainServer = try Server(["plain", Self.sample])
        defer { _ = plainServer.stop() }
        let notTLS = await Samples.scan(plainServer.url("index.m3u8"), fetcher: trusting)
        #expect(Self.tlsFailure(notTLS) == .protocolMismatch, "\(notTLS.failures)")

        // The command line: words that say what to do; --ca-file, and SSL_CERT_FILE as curl reads it.
        let plain = try await offThePool { try Command.run(["scan", good.url("index.m3u8")]) }
        #expect(plain.stderr.contains("127.0.0.1: its certificate is signed by an authority this machine does not trust (trust its authority with --ca-file"),
                "\(plain.stderr)")
        let withCA = try await offThePool { try Command.run(["--speed", "max", "--format", "jsonl", "--ca-file", ca, good.url("index.m3u8")]) }
        let planted = try Self.planted()
        #expect(withCA.status == 0 && withCA.sends == planted, "\(withCA.stderr)")
        let fromEnvironment = try await offThePool {
            try Command.run(["--speed", "max", "--format", "jsonl", good.url("index.m3u8")], environment: ["SSL_CERT_FILE": ca])
        }
        #expect(fromEnvironment.sends == (try Self.planted()), "\(fromEnvironment.stderr)")
        let late = try await offThePool { try Command.run(["scan", "--ca-file", ca, expired.url("index.m3u8")]) }
        #expect(late.stderr.contains("its certificate has expired"), "\(late.stderr)")
        let misnamed = try await offThePool { try Command.run(["scan", "--ca-file", ca, wrongName.url("index.m3u8")]) }
        #expect(misnamed.stderr.contains("its certificate is not for this host name"), "\(misnamed.stderr)")
    }

    @Test func anOriginThatWantsAClientCertificateGetsOne() async throws {
        let certificates = try Self.certificates()
        defer { try? FileManager.default.removeItem(at: certificates) }
        let origin = try Self.origin(certificates, "good", clientCA: true)
        defer { _ = origin.stop() }
        func fetcher(_ client: String?) -> Fetcher {
            var fetcher = Fetcher(retry: .none)
            fetcher.tls = Fetcher.TLS(caFiles: [certificates.appendingPathComponent("ca.pem").path],
                                      clientCertificate: client.map { certificates.appendingPathComponent("\($0).pem").path },
                                      clientKey: client.map { certificates.appendingPathComponent("\($0).key").path })
            return fetcher
        }
        #expect(Self.tlsFailure(await Samples.scan(origin.url("index.m3u8"), fetcher: fetcher(nil))) == .clientCertificateRefused)
        #expect(Self.tlsFailure(await Samples.scan(origin.url("index.m3u8"), fetcher: fetcher("client-other"))) == .clientCertificateRefused)
        #expect(PlayerSessionTests.sends(await Samples.scan(origin.url("index.m3u8"), fetcher: fetcher("client"))) == (try Self.planted()))
    }

    /// Through a forward proxy that logs what passes: https tunnelled (CONNECT) to the origin,
    /// credentials in the proxy URL never in what the meter writes; `no_proxy` goes around it.
    @Test func throughAProxyAndAroundIt() async throws {
        let certificates = try Self.certificates()
        defer { try? FileManager.default.removeItem(at: certificates) }
        let origin = try Self.origin(certificates, "good", clientCA: true), proxy = try Server(["proxy"]), bypassed = try Server(["proxy"])
        // The whole of it at once: the company's CA, the meter's certificate, the proxy.
        let tls = ["--ca-file", certificates.appendingPathComponent("ca.pem").path,
                   "--client-cert", certificates.appendingPathComponent("client.pem").path,
                   "--client-key", certificates.appendingPathComponent("client.key").path]
        let through = try await offThePool {
            try Command.run(["--speed", "max", "--format", "jsonl"] + tls + [origin.url("index.m3u8")],
                            environment: ["https_proxy": "http://meter:s3cret@127.0.0.1:\(proxy.port)"])
        }
        let around = try await offThePool {
            try Command.run(["--speed", "max", "--format", "jsonl"] + tls + [origin.url("index.m3u8")],
                            environment: ["HTTPS_PROXY": "http://127.0.0.1:\(bypassed.port)", "NO_PROXY": "localhost,127.0.0.1"])
        }
        let (log, bypassedLog) = (proxy.stop(), bypassed.stop())
        _ = origin.stop()
        let planted = try Self.planted()
        #expect(through.sends == planted, "\(through.stderr)")
        #expect(around.sends == planted, "\(around.stderr)")
        let lines = log.split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy { $0 == "CONNECT 127.0.0.1:\(origin.port)" }, "\(log)")
        #expect(bypassedLog.isEmpty, "no_proxy: \(bypassedLog)")
        #expect(!(through.stdout + through.stderr).contains("s3cret"))
    }

    /// A line-up whose channel has its origin's CA and its own client certificate, reached
    /// through the proxy; over the API, no channel may name a file on this machine.
    @Test func aLineUpChannelWithItsOwnCertificatesThroughTheProxy() async throws {
        let certificates = try Self.certificates()
        defer { try? FileManager.default.removeItem(at: certificates) }
        let origin = try Self.origin(certificates, "good", clientCA: true), proxy = try Server(["proxy"])
        var fetcher = Fetcher(ioTimeout: .seconds(5), retry: Samples.quickRetry)
        fetcher.proxy = Fetcher.Proxy(server: try #require(Fetcher.Proxy.Server("127.0.0.1:\(proxy.port)")), environment: [:])
        let config = try LineupConfig.parse("""
            defaults: {alert_after: 60, vod: true, ca_file: "\(certificates.appendingPathComponent("ca.pem").path)"}
            channels:
              - {name: private, url: "\(origin.url("index.m3u8"))", client_cert: "\(certificates.appendingPathComponent("client.pem").path)",
                 client_key: "\(certificates.appendingPathComponent("client.key").path)"}
              - {name: without, url: "\(origin.url("index.m3u8"))"}
            """, file: "lineup.yaml")
        let running = try await RunningLineup(config: config, fetcher: fetcher)
        let (statuses, ended) = try await running.statuses { $0.first { $0.name == "private" }?.state == .ended }
        await running.lineup.removeAll()
        let log = proxy.stop()
        _ = origin.stop()
        #expect(ended, "\(statuses)")
        #expect(log.split(separator: "\n").contains("CONNECT 127.0.0.1:\(origin.port)"), "\(log)")
        #expect(running.deliveries("private").map { Command.Send(pts: $0.pts, payload: $0.payload) } == (try Self.planted()))
        #expect(running.deliveries("without").isEmpty)
        #expect(throws: ConfigError.self) {
            try config.channel(from: "{name: x, url: \"https://h/a.m3u8\", client_cert: /etc/passwd}", source: "PUT /channels/x")
        }
    }

    @Test func proxiesAreReadAsCurlReadsThem() throws {
        let proxy = try #require(Fetcher.Proxy.fromEnvironment(["HTTPS_PROXY": "http://u:p%40ss@proxy.corp:3128", "http_proxy": "proxy.corp",
                                                                "no_proxy": "origin.internal, .corp.example"]))
        #expect(proxy.https?.description == "http://proxy.corp:3128" && proxy.https?.password == "p@ss")
        #expect(proxy.http?.port == 1080)
        #expect(proxy.server(for: URL(string: "https://cdn.example/a.m3u8")!) == proxy.https)
        #expect(proxy.server(for: URL(string: "http://cdn.example/a.m3u8")!) == proxy.http)
        #expect(proxy.server(for: URL(string: "https://origin.internal/a.m3u8")!) == nil)
        #expect(proxy.server(for: URL(string: "https://a.corp.example/a.m3u8")!) == nil)
        #expect(proxy.server(for: URL(string: "https://corp.example/a.m3u8")!) == nil)
        #expect(Fetcher.Proxy.fromEnvironment(["no_proxy": "*"]) == nil)
        #expect(Fetcher.Proxy.Server("socks5://x:1") == nil)
        #expect(Fetcher.TLS.fromEnvironment(["SSL_CERT_DIR": "/etc/corp-certs"]).trustStore == "/etc/corp-certs")
    }
}
