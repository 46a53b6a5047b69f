/// Where a playlist may send us: one rule for every reference it makes (segments, keys,
/// initialisation sections, variants, renditions). A playlist loaded over http(s) may reference
/// http(s) only; a local playlist may reference local files and http(s); no playlist may use
/// another protocol (file:, data:, pipe:, concat:, tcp:, udp:, ...). A stream is other people's
/// input: it must never make us read a local file or open a socket. Inputs the user names are
/// theirs to choose and are not subject to it.
package enum ReferenceRule {
    /// A reference the rule does not let a playlist follow.
    package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        package var reference: String
        /// The scheme refused; `nil` for a local file named by a playlist loaded over http(s).
        package var scheme: String?

        package init(reference: String, scheme: String?) {
            self.reference = reference
            self.scheme = scheme
        }

        package var description: String {
            scheme.map { "refused '\(reference)': a playlist may not reference \($0): URLs (only http(s), and local files from a local playlist)" }
                ?? "refused '\(reference)': a playlist loaded over http(s) may reference only http(s) URLs"
        }
    }

    /// Why `reference` (resolved) may not be followed from the playlist at `playlist`; `nil` when it may.
    package static func refusal(of reference: String, from playlist: String) -> Refusal? {
        switch (Place(playlist), Place(reference)) {
        case (_, .remote), (.local, .local): nil
        case (_, .local): Refusal(reference: reference, scheme: nil)
        case (_, .other(let scheme)): Refusal(reference: reference, scheme: scheme)
        }
    }

    /// The libavformat protocols that opening `location` may use, nested ones and redirects
    /// included: what the shim passes as `protocol_whitelist`.
    package static func protocols(for location: String) -> String {
        switch Place(location) {
        case .local: "file"
        case .remote: "http,https,tls,tcp"
        case .other("rtp"): "rtp,udp"
        case .other(let scheme): scheme
        }
    }

    private enum Place: Equatable {
        case local
        /// http or https with a host.
        case remote
        case other(String)

        init(_ location: String) {
            guard Location.hasScheme(location), let colon = location.firstIndex(of: ":") else {
                self = .local
                return
            }
            let scheme = location[..<colon].lowercased()
            switch scheme {
            case "file": self = .local
            case "http", "https":
                // http:/path has no host: libavformat would make one up; it is not a web address.
                let rest = location[location.index(after: colon)...]
                self = rest.hasPrefix("//") && rest.dropFirst(2).first.map({ !"/?#".contains($0) }) == true ? .remote : .other(scheme)
            default: self = .other(scheme)
            }
        }
    }
}
