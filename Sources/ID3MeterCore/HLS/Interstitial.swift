import FoundationEssentials

/// An HLS interstitial (RFC 8216bis appendix D, Apple's "HLS Interstitials"): an
/// `EXT-X-DATERANGE` of `CLASS="com.apple.hls.interstitial"` that has a player leave the primary
/// content at `START-DATE`, play other assets (an ad break, a bumper), and come back. AVPlayer,
/// hls.js 1.6 and Media3 play them; their tags go to the SDK like the primary's.
package struct Interstitial: Sendable, Equatable {
    static let dateRangeClass = "com.apple.hls.interstitial"

    /// The date range's `ID`: what names the break in records.
    public var id: String
    public var startDate: Date
    /// `DURATION` (or `PLANNED-DURATION`): how long the break is scheduled for.
    public var duration: Double?
    /// `X-ASSET-URI`: one asset, an HLS playlist.
    public var assetURI: String?
    /// `X-ASSET-LIST`: a JSON list of assets (`AssetList`).
    public var assetList: String?
    /// `X-RESUME-OFFSET`: where the primary resumes, from `startDate`; absent, the time the
    /// assets played (the primary's content under the break is replaced, as a live player keeps
    /// its distance from the edge).
    public var resumeOffset: Double?
    /// `X-PLAYOUT-LIMIT`: the break plays at most this long.
    public var playoutLimit: Double?
    /// `CUE`: played before the primary (`PRE`), after it ends (`POST`), at most once (`ONCE`).
    public var cue: Cue = []
    /// `X-SNAP`: the primary is left (`OUT`) at the segment boundary closest to `startDate`, and
    /// rejoined (`IN`) at the one closest to the resumption point, not inside a segment.
    public var snap: Snap = []

    package struct Snap: OptionSet, Sendable, Equatable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package static let out = Snap(rawValue: 1)
        package static let `in` = Snap(rawValue: 2)
    }

    package struct Cue: OptionSet, Sendable, Equatable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package static let pre = Cue(rawValue: 1)
        package static let post = Cue(rawValue: 2)
        package static let once = Cue(rawValue: 4)
    }

    /// The interstitial an `EXT-X-DATERANGE`'s attributes describe, URIs resolved against the
    /// playlist at `location`; `nil` for a date range of another class, or one a player could not
    /// schedule (no ID, no START-DATE, no asset, `CUE` both `PRE` and `POST`).
    static func parse(_ attributes: AttributeList, location: String) -> Interstitial? {
        guard attributes["CLASS"] == dateRangeClass, let id = attributes["ID"], !id.isEmpty,
              let start = attributes["START-DATE"].flatMap({ ProgramDateTime.parse(Substring($0)) }) else { return nil }
        let uri = attributes["X-ASSET-URI"].map { Location.resolve($0, against: location) }
        // RFC 8216bis Appendix D allows one of the two; given both, hls.js plays the URI.
        let list = uri != nil ? nil : attributes["X-ASSET-LIST"].map { Location.resolve($0, against: location) }
        guard uri != nil || list != nil else { return nil }
        func seconds(_ name: String) -> Double? { attributes.decimal(name).flatMap { $0.isFinite && (0...86_400).contains($0) ? $0 : nil } }
        var cue: Cue = []
        for value in (attributes["CUE"] ?? "").split(separator: ",") {
            switch value.trimmingWhitespace {
            case "PRE": cue.insert(.pre)
            case "POST": cue.insert(.post)
            case "ONCE": cue.insert(.once)
            default: break
            }
        }
        // Before the primary and after it at once is no place: hls.js finds it invalid.
        guard !cue.isSuperset(of: [.pre, .post]) else { return nil }
        var snap: Snap = []
        for value in (attributes["X-SNAP"] ?? "").split(separator: ",") {
            switch value.trimmingWhitespace {
            case "OUT": snap.insert(.out)
            case "IN": snap.insert(.in)
            default: break
            }
        }
        return Interstitial(id: id, startDate: start, duration: seconds("DURATION") ?? seconds("PLANNED-DURATION"), assetURI: uri,
                            assetList: list, resumeOffset: seconds("X-RESUME-OFFSET"), playoutLimit: seconds("X-PLAYOUT-LIMIT"), cue: cue,
                            snap: snap)
    }

    /// An `X-ASSET-LIST` document (`{"ASSETS": [{"URI": ..., "DURATION": ...}, ...]}`).
    package enum AssetList {
        /// A break of more assets than this is a hostile list, not an ad pod.
        static let maximumAssets = 100

        /// The assets' URIs, resolved against the list's `location`, in order.
        package static func parse(_ bytes: [UInt8], location: String) throws(AssetListError) -> [String] {
            guard let assets = try? JSONDecoder().decode(Document.self, from: Data(bytes)).assets else { throw AssetListError.notAnAssetList }
            guard assets.count <= maximumAssets else { throw AssetListError.tooManyAssets(assets.count, limit: maximumAssets) }
            return try assets.map { asset throws(AssetListError) in
                guard let uri = asset.uri, !uri.isEmpty else { throw AssetListError.assetWithoutURI }
                return Location.resolve(uri, against: location)
            }
        }

        /// What is read of the document: the rest (`DURATION`, a server's own keys) is left.
        private struct Document: Decodable {
            var assets: [Asset]

            enum CodingKeys: String, CodingKey { case assets = "ASSETS" }
        }

        private struct Asset: Decodable {
            /// A URI that is not a string counts as none.
            var uri: String?

            enum CodingKeys: String, CodingKey { case uri = "URI" }

            init(from decoder: any Decoder) throws {
                uri = try? decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .uri)
            }
        }
    }

    /// Why an asset list could not be read.
    package enum AssetListError: Error, Sendable, Equatable, CustomStringConvertible {
        case notAnAssetList
        case assetWithoutURI
        case tooManyAssets(Int, limit: Int)

        package var description: String {
            switch self {
            case .notAnAssetList: "not an asset list (a JSON object with an ASSETS array)"
            case .assetWithoutURI: "an asset without a URI"
            case .tooManyAssets(let count, let limit): "\(count) assets, more than the \(limit) a break may have"
            }
        }
    }
}
