/// Loads HLS playlists under `ReferenceRule`, and picks a master playlist's variant: what every
/// walk through a presentation starts with, VOD or live, scan or meter.
struct PlaylistLoader: Sendable {
    var fetcher: Fetcher
    /// Which variant of a master playlist is read.
    var variant: VariantChoice
    /// The audio rendition of a master playlist read instead of any variant (its place among
    /// `MasterPlaylist.audioRenditions`): a rendition compared with the others.
    var audioRendition: Int?

    init(fetcher: Fetcher = Fetcher(), variant: VariantChoice = .lowestBandwidth) {
        self.fetcher = fetcher
        self.variant = variant
    }

    /// The playlist at `location`, read once (whoever follows a playlist tries again itself);
    /// `parent`, the playlist that referenced it, if any, must be allowed to. `keeping`: which
    /// segments are made (a live reload: those from the next one on), the others counted.
    /// `imports`: the variables of the master playlist it was reached from (`EXT-X-DEFINE:IMPORT`).
    func load(_ location: String, referencedBy parent: String? = nil, targetDuration: Double? = nil,
              keeping window: PlaylistParser.SegmentWindow = .all, imports: [String: String] = [:]) async throws(SegmentLoadError) -> Playlist {
        if let parent, let refusal = ReferenceRule.refusal(of: location, from: parent) { throw .refused(refusal, .playlist(location)) }
        let document: (bytes: [UInt8], location: String)
        do throws(FetchFailure) { document = try await fetcher.fetchDocument(location, as: .playlist, targetDuration: targetDuration, retrying: false) } catch {
            throw .fetch(error, .playlist(location))
        }
        // Its references, and `QUERYPARAM`s, are of where it came from after redirects, as
        // hls.js reads them (its loader's response URL); it is reloaded from `location`.
        do throws(PlaylistError) {
            return try PlaylistParser.parse(String(decoding: document.bytes, as: UTF8.self), location: document.location, keeping: window,
                                            imports: imports)
        } catch {
            throw .unreadablePlaylist(location, error)
        }
    }

    /// The content-steering manifest at `location`, which `master` names: under the reference
    /// rule and a playlist's limits.
    func loadSteering(_ location: String, referencedBy master: String, targetDuration: Double?) async throws(SegmentLoadError)
        -> SteeringManifest {
        if let refusal = ReferenceRule.refusal(of: location, from: master) { throw .refused(refusal, .steeringManifest(location)) }
        let bytes: [UInt8]
        do throws(FetchFailure) { bytes = try await fetcher.fetch(location, as: .playlist, targetDuration: targetDuration, retrying: false) } catch {
            throw .fetch(error, .steeringManifest(location))
        }
        do throws(SteeringManifest.Problem) { return try SteeringManifest.parse(bytes) } catch {
            throw .unreadableSteeringManifest(location, error)
        }
    }

    /// The assets an interstitial's `X-ASSET-LIST` at `location` names, which `playlist` lists:
    /// under the reference rule and a playlist's limits.
    func loadAssetList(_ location: String, referencedBy playlist: String) async throws(SegmentLoadError) -> [String] {
        if let refusal = ReferenceRule.refusal(of: location, from: playlist) { throw .refused(refusal, .assetList(location)) }
        let bytes: [UInt8]
        do throws(FetchFailure) { bytes = try await fetcher.fetch(location, as: .playlist, retrying: false) } catch {
            throw .fetch(error, .assetList(location))
        }
        do throws(Interstitial.AssetListError) { return try Interstitial.AssetList.parse(bytes, location: location) } catch {
            throw .unreadableAssetList(location, error)
        }
    }

    /// The media playlist at `location` (see `load`).
    func loadMedia(_ location: String, referencedBy parent: String? = nil, targetDuration: Double? = nil,
                   keeping window: PlaylistParser.SegmentWindow = .all, imports: [String: String] = [:]) async throws(SegmentLoadError)
        -> MediaPlaylist {
        switch try await load(location, referencedBy: parent, targetDuration: targetDuration, keeping: window, imports: imports) {
        case .media(let media): return media
        case .master: throw .masterPlaylist(location)
        }
    }

    /// The playlist at `location` and, when it is a master playlist, the media playlist of the
    /// chosen variant, with its audio rendition and redundant copies noted (the first copy that
    /// loads is read). `keeping` says which of the media playlist's segments are made.
    /// `parent`: the playlist that referenced it (an interstitial's asset), which must be allowed to.
    func resolve(_ location: String, referencedBy parent: String? = nil, keeping window: PlaylistParser.SegmentWindow = .all)
        async throws(SegmentLoadError) -> ResolvedPlaylist {
        switch try await load(location, referencedBy: parent, keeping: window) {
        case .media(let media):
            return ResolvedPlaylist(location: location, playlist: media)
        case .master(let master) where audioRendition != nil:
            let renditions = master.audioRenditions
            guard let index = audioRendition, index < renditions.count, let uri = renditions[index].uri else {
                throw .noSuchRendition(audioRendition ?? 0, count: renditions.count)
            }
            let media = try await loadMedia(uri, referencedBy: location, keeping: window, imports: master.variables)
            return ResolvedPlaylist(location: uri, playlist: media, master: location, variables: master.variables)
        case .master(let master):
            guard let chosen = variant.pick(from: master.variants) else {
                throw .noSuchVariant(variant, count: master.variants.count)
            }
            let paths = master.paths(for: chosen)
            var firstError: SegmentLoadError?
            for (index, path) in paths.enumerated() {
                do throws(SegmentLoadError) {
                    let media = try await loadMedia(path.uri, referencedBy: location, keeping: window, imports: master.variables)
                    return ResolvedPlaylist(location: path.uri, variant: path, playlist: media, audio: master.audioRendition(for: path),
                                            backups: Array(paths[(index + 1)...] + paths[..<index]), master: location,
                                            steeringServer: master.steeringServer, variables: master.variables,
                                            firstChoiceFailed: firstError.map { (paths[0].uri, $0) })
                } catch {
                    firstError = firstError ?? error
                }
            }
            throw firstError ?? .noSuchVariant(variant, count: master.variants.count)
        }
    }
}

/// A media playlist reached from what the user named.
struct ResolvedPlaylist: Sendable {
    var location: String
    /// The variant chosen, when what the user named is a master playlist.
    var variant: Variant?
    var playlist: MediaPlaylist
    /// The variant's audio rendition with a playlist of its own, which may carry the tags instead.
    var audio: Rendition?
    /// Redundant copies of the media playlist, in the order to try them.
    var backups: [Variant] = []
    /// The master playlist, when there is one.
    var master: String?
    /// Its content-steering server.
    var steeringServer: String?
    /// Its variables, which every load of a media playlist it lists may import.
    var variables: [String: String] = [:]
    /// The copy the master put first, when it could not be loaded and `location` is another.
    var firstChoiceFailed: (location: String, cause: SegmentLoadError)?
}
