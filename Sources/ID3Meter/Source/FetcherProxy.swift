import Foundation

extension Fetcher {
    /// The forward proxy requests go through, as curl reads it: `https_proxy` for https URLs
    /// (through a CONNECT tunnel), `http_proxy` for http ones, `no_proxy` for the hosts reached
    /// directly; upper-case names too. `--proxy` overrides the environment. The reference rule
    /// and a channel's host rule judge the target host, never the proxy.
    public struct Proxy: Sendable, Hashable {
        /// A proxy server; its credentials (from the URL's user part) go in
        /// `Proxy-Authorization` and never into words.
        public struct Server: Sendable, Hashable, CustomStringConvertible {
            public var host: String
            public var port: Int
            public var user: String?
            public var password: String?

            /// `http://[user:password@]host[:port]` (no scheme: http; the port defaults to 1080
            /// as curl's does); `nil` for anything else.
            public init?(_ text: String) {
                let trimmed = text.trimmingCharacters(in: .whitespaces)
                guard !trimmed.isEmpty, let url = URL(string: trimmed.contains("://") ? trimmed : "http://" + trimmed),
                      url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty else { return nil }
                self.host = host
                port = url.port ?? 1080
                user = url.user?.removingPercentEncoding
                password = url.password?.removingPercentEncoding
            }

            /// The proxy without its credentials.
            public var description: String { "http://\(host):\(port)" }
        }

        public var http: Server?
        public var https: Server?
        /// `no_proxy`: `*`, host names (each also matching its subdomains, with or without a
        /// leading dot) and addresses.
        public var bypass: [String] = []

        public init(http: Server? = nil, https: Server? = nil, bypass: [String] = []) {
            self.http = http
            self.https = https
            self.bypass = bypass
        }

        /// One proxy for every URL (`--proxy`), the environment's `no_proxy` still applying.
        public init(server: Server, environment: [String: String] = ProcessInfo.processInfo.environment) {
            self.init(http: server, https: server, bypass: Self.fromEnvironment(environment)?.bypass ?? [])
        }

        /// The environment's proxies; `nil` when it names none.
        public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Proxy? {
            func value(_ name: String) -> String? {
                (environment[name.lowercased()] ?? environment[name.uppercased()]).flatMap { $0.isEmpty ? nil : $0 }
            }
            let proxy = Proxy(http: value("http_proxy").flatMap(Server.init), https: value("https_proxy").flatMap(Server.init),
                              bypass: (value("no_proxy") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                                  .filter { !$0.isEmpty })
            return proxy.http == nil && proxy.https == nil ? nil : proxy
        }

        /// The proxy for a request to `url`; `nil`: straight to its host.
        func server(for url: URL) -> Server? {
            guard let host = url.host?.lowercased() else { return nil }
            let bypassed = bypass.contains { entry in
                if entry == "*" { return true }
                let name = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
                return host == name || host.hasSuffix("." + name)
            }
            guard !bypassed else { return nil }
            return url.scheme?.lowercased() == "https" ? https : http
        }
    }
}
