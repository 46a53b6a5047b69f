import ID3MeterCore

/// One rendition of a presentation a viewer may play, read on its own by `scan --all-renditions`:
/// an HLS variant (as a player plays it, with its audio rendition), an HLS audio rendition, or
/// a DASH Representation (counted over the first Period's AdaptationSets, as `--variant N` counts).
package struct LadderRendition: Sendable, Hashable {
    package enum Pick: Sendable, Hashable {
        /// The master playlist's variant at this place (its redundant copies are its backups, not renditions).
        case variant(Int)
        /// The master playlist's audio rendition at this place among those with a URI of their own.
        case audio(Int)
        /// The Representation at this place, counting every Representation of a Period in the MPD's order.
        case representation(Int)
    }

    package var pick: Pick
    /// Its URI (HLS, resolved) or Representation id.
    package var name: String
    /// `variant` or `audio` (HLS), the content type (DASH): renditions are compared within their group.
    package var group: String
    package var bandwidth: Int?
    package var frameRate: Double?

    /// A rendition's tags, empty, for a scan of it to fill.
    package var tags: RenditionTags { RenditionTags(name: name, group: group, bandwidth: bandwidth, frameRate: frameRate) }
}

/// One input of a scan: what the user named, or one rendition of it.
package struct ScanInput: Sendable, Hashable {
    package var location: String
    package var rendition: LadderRendition?

    package init(_ location: String, rendition: LadderRendition? = nil) {
        self.location = location
        self.rendition = rendition
    }

    /// As reports and progress name it: `master.m3u8 [v1/index.m3u8]`.
    package var name: String { rendition.map { "\(location) [\($0.name)]" } ?? location }
}

/// The renditions of a master playlist or an MPD.
package enum RenditionLadder {
    /// The most renditions of one presentation read and compared: a real ladder has a dozen or
    /// two; a hostile master may list thousands, each a walk (serve's audit runs them at once).
    package static let maximumRenditions = 64

    /// The renditions of `location`, the first `maximumRenditions`, and how many it lists: `nil`
    /// when it is not a master playlist or an MPD (or cannot be loaded: the scan of it then says
    /// why). DASH: the Representations of audio and video AdaptationSets (text and images carry
    /// no timed ID3).
    package static func of(_ location: String, scanner: TagScanner) async -> (renditions: [LadderRendition], listed: Int)? {
        guard let all = await all(of: location, scanner: scanner) else { return nil }
        return (Array(all.prefix(maximumRenditions)), all.count)
    }

    private static func all(of location: String, scanner: TagScanner) async -> [LadderRendition]? {
        switch await InputKind.of(location, fetcher: scanner.fetcher) {
        case .hlsPlaylist:
            guard case .master(let master)? = try? await scanner.loader.load(location) else { return nil }
            var distinct: [Variant] = []
            var ladder: [LadderRendition] = []
            for (index, variant) in master.variants.enumerated() where !distinct.contains(where: variant.isRedundantCopy(of:)) {
                distinct.append(variant)
                ladder.append(LadderRendition(pick: .variant(index), name: variant.uri, group: "variant", bandwidth: variant.bandwidth,
                                              frameRate: variant.frameRate))
            }
            for (index, rendition) in master.audioRenditions.enumerated() {
                ladder.append(LadderRendition(pick: .audio(index), name: rendition.uri ?? rendition.name, group: "audio"))
            }
            return ladder
        case .mpd:
            guard let mpd = try? await MPDLoader(fetcher: scanner.fetcher).load(location), let period = mpd.periods.first else { return nil }
            let frameRate = MPDChoice.frameRate(in: period)
            return period.adaptationSets.flatMap(\.representations).enumerated().compactMap { index, representation in
                guard let type = representation.contentType, type == "audio" || type == "video" else { return nil }
                return LadderRendition(pick: .representation(index), name: representation.id, group: type, bandwidth: representation.bandwidth,
                                       frameRate: representation.isVideo ? representation.frameRate ?? frameRate : nil)
            }
        case .media:
            return nil
        }
    }
}
