import FoundationEssentials

/// A content-steering manifest (HLS Content Steering, version 1): which pathways (CDNs) a
/// client should use, best first, and when to ask again. It comes from a server named in the
/// master playlist, so it is read as untrusted input: bounded, and its TTL held to a sane range.
package struct SteeringManifest: Sendable, Equatable {
    /// Seconds until the manifest is asked for again.
    package var timeToLive: Double
    /// Where to ask next time, relative to where this one came from.
    package var reloadURI: String?
    /// Pathway IDs, the one to use first.
    package var pathwayPriority: [String]

    /// Why a steering server's answer cannot be used.
    package enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case notJSON
        case version(Int?)
        case noPathwayPriority

        package var description: String {
            switch self {
            case .notJSON: "not a JSON steering manifest"
            case .version(let version): "VERSION \(version.map(String.init) ?? "missing"), not 1"
            case .noPathwayPriority: "no PATHWAY-PRIORITY list of pathway IDs"
            }
        }
    }

    /// The spec's default TTL, and the range a server's is held to: a TTL of 0 would have it
    /// asked without a pause, one of years never again.
    package static let defaultTimeToLive = 300.0
    static let timeToLiveRange = 1.0...86_400
    static let maximumPathways = 1_000

    private struct Document: Decodable {
        var version: Int?
        var ttl: Double?
        var reloadURI: String?
        var pathwayPriority: [String]?

        enum CodingKeys: String, CodingKey {
            case version = "VERSION", ttl = "TTL", reloadURI = "RELOAD-URI", pathwayPriority = "PATHWAY-PRIORITY"
        }
    }

    package init(timeToLive: Double, reloadURI: String?, pathwayPriority: [String]) {
        self.timeToLive = timeToLive
        self.reloadURI = reloadURI
        self.pathwayPriority = pathwayPriority
    }

    /// Reads a manifest's bytes (PATHWAY-CLONES, which would make pathways from URI
    /// templates, are not followed: the copies the master playlist lists are).
    package static func parse(_ bytes: [UInt8]) throws(Problem) -> SteeringManifest {
        guard let document = try? JSONDecoder().decode(Document.self, from: Data(bytes)) else { throw .notJSON }
        guard document.version == 1 else { throw .version(document.version) }
        guard let priority = document.pathwayPriority, !priority.isEmpty else { throw .noPathwayPriority }
        let ttl = min(max(document.ttl ?? defaultTimeToLive, timeToLiveRange.lowerBound), timeToLiveRange.upperBound)
        return SteeringManifest(timeToLive: ttl, reloadURI: document.reloadURI,
                                pathwayPriority: Array(priority.prefix(maximumPathways)))
    }
}
