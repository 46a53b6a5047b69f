import Foundation
import NIOSSL

extension Fetcher {
    /// Whom HTTPS connections trust and how they prove who they are: what an origin inside a
    /// broadcaster's network needs (its company's certificate authority, a client certificate).
    /// There is no switch that turns verification off.
    public struct TLS: Sendable, Hashable {
        /// PEM files of certificate authorities trusted besides the system's (`--ca-file`).
        public var caFiles: [String] = []
        /// PEM file or folder of certificates trusted instead of the system's (`SSL_CERT_FILE`,
        /// `SSL_CERT_DIR`, as curl and OpenSSL read them).
        public var trustStore: String?
        /// A client certificate (PEM, its chain after it) and its private key, for origins that
        /// ask for one (mutual TLS).
        public var clientCertificate: String?
        public var clientKey: String?

        public init(caFiles: [String] = [], trustStore: String? = nil, clientCertificate: String? = nil, clientKey: String? = nil) {
            self.caFiles = caFiles
            self.trustStore = trustStore
            self.clientCertificate = clientCertificate
            self.clientKey = clientKey
        }

        /// The system's trust, unless `SSL_CERT_FILE` or `SSL_CERT_DIR` in `environment` names
        /// other certificates (the file when both are set, as OpenSSL does).
        public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> TLS {
            TLS(trustStore: environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
                ?? environment["SSL_CERT_DIR"].flatMap { $0.isEmpty ? nil : $0 })
        }

        /// NIOSSL's client configuration: certificates verified against the trust roots and the
        /// host name, always.
        func configuration() throws(FetchError) -> TLSConfiguration {
            var configuration = TLSConfiguration.makeClientConfiguration()
            do {
                if let trustStore {
                    configuration.trustRoots = .certificates(try Self.certificates(at: trustStore))
                }
                if !caFiles.isEmpty {
                    configuration.additionalTrustRoots = [.certificates(try caFiles.flatMap { try Self.certificates(at: $0) })]
                }
                if let clientCertificate {
                    configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(clientCertificate).map { .certificate($0) }
                    configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: clientKey ?? clientCertificate, format: .pem))
                }
            } catch let error as FetchError {
                throw error
            } catch {
                throw .tls(TLSFailure(host: "", reason: .unusableFile(String(describing: error))))
            }
            return configuration
        }

        /// The certificates of a PEM file, or of every PEM file in a folder.
        private static func certificates(at path: String) throws -> [NIOSSLCertificate] {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                throw FetchError.tls(TLSFailure(host: "", reason: .unusableFile("\(path): no such file")))
            }
            guard isFolder.boolValue else {
                let found = try NIOSSLCertificate.fromPEMFile(path)
                guard !found.isEmpty else { throw FetchError.tls(TLSFailure(host: "", reason: .unusableFile("\(path): no PEM certificate"))) }
                return found
            }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            return names.sorted().flatMap { name in (try? NIOSSLCertificate.fromPEMFile((path as NSString).appendingPathComponent(name))) ?? [] }
        }
    }
}
