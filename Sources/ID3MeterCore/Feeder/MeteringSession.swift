import FoundationEssentials

/// One metering session as a DTVR player runs it: `play`, `loadMetadata` with the DTVR content
/// metadata, `sendID3` on time for every tag the source yields, then `end`, even when the
/// session is cut short by cancellation.
public struct MeteringSession: Sendable {
    /// What `play` is given: the channel as the backend names it.
    public var channelName: String
    /// "1": linear, matches the TV ad load; "2": dynamic ad insertion.
    public var adModel: String

    /// A session on `channelName` with DTVR's ad model (`"1"` linear, `"2"` dynamic).
    public init(channelName: String, adModel: String = "1") {
        self.channelName = channelName
        self.adModel = adModel
    }

    /// The DTVR content metadata `loadMetadata` is given, encoded (an ad model from a caller is
    /// a string like any other, and stays one).
    public var metadataJSON: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(["type": "content", "adModel": adModel])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The one way a stream is metered (`StreamMeter.events` is this, on a source and feeder it
    /// makes from an input; `MeteringService` pulls those in a service group).
    ///
    /// The session's events as it plays `source` through `feeder` against `engine`: `play` and
    /// `loadMetadata` at the first pull, then the feeder's events, then `end` once they end (the
    /// source's end, the feeder's stop, or the pulling task's cancellation). A consumer that
    /// stops pulling before the end leaves the session without its `end`: cancel instead.
    ///
    /// A source that throws (a `TagSource` whose input failed: `InputFailure`) ends the session
    /// the same way: the tags buffered before the failure are delivered, `end` is called, then
    /// the failure is thrown. A source that never throws makes a session that never throws.
    public func events<S: AsyncSequence & Sendable, C: Clock>(_ source: S, feeder: Feeder<C>, engine: any MeteringEngine)
        -> some AsyncSequence<MeteringEvent, S.Failure> & Sendable
    where S.Element == MediaEvent, C.Duration == Duration {
        SessionEvents(session: self, played: feeder.events(source, engine: engine), engine: engine)
    }

    /// A channel name from a stream's URL: the playlist's name, or its folder's when the
    /// name is a generic one like `index` or `master`. A live transport stream's URL
    /// (`udp://239.1.1.1:5000`, `srt://host:9000?streamid=news`) names no file: its SRT stream
    /// id (the `r=` resource of an access-control id), or else its address.
    public static func channelName(for input: String) -> String {
        let parts = input.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let address = parts.first ?? ""
        if let scheme = address.firstRange(of: "://") {
            let authority = address[scheme.upperBound...].prefix { $0 != "/" }
            let path = address[scheme.upperBound...].dropFirst(authority.count)
            if path.allSatisfy({ $0 == "/" }) {
                let query = parts.count > 1 ? parts[1] : ""
                if let id = streamID(in: query) { return id }
                // `udp://@239.1.1.1:5000` (a multicast join) and `srt://user@host`: the host and port.
                let host = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? authority
                if !host.isEmpty { return String(host) }
            }
        }
        let components = address.split(separator: "/")
        let stem = components.last.map { String($0.split(separator: ".").first ?? $0) } ?? ""
        let generic = ["index", "master", "playlist", "prog_index", "live", "stream", "main"]
        if generic.contains(stem.lowercased()), components.count >= 2 {
            let folder = String(components[components.count - 2])
            if !folder.hasSuffix(":") { return folder }
        }
        return stem.isEmpty ? "defaultChannelName" : stem
    }

    /// An SRT URL's `streamid`: its `r=` resource when it is in the access-control form
    /// (`#!::r=live/news,m=request`), else the whole id; `nil` when there is none.
    private static func streamID(in query: Substring) -> String? {
        guard let pair = query.split(separator: "&").first(where: { $0.hasPrefix("streamid=") }) else { return nil }
        let id = pair.dropFirst("streamid=".count)
        guard id.hasPrefix("#!::") else { return id.isEmpty ? nil : String(id) }
        let resource = id.dropFirst(4).split(separator: ",").first { $0.hasPrefix("r=") }?.dropFirst(2)
        return resource.flatMap { $0.isEmpty ? nil : String($0) } ?? String(id)
    }
}

/// A feeder's events between the engine's `play` and `end`.
private struct SessionEvents<Played: AsyncSequence & Sendable>: AsyncSequence, Sendable
where Played.Element == MeteringEvent {
    typealias Failure = Played.Failure

    let session: MeteringSession
    let played: Played
    let engine: any MeteringEngine

    func makeAsyncIterator() -> Iterator { Iterator(events: self, played: played.makeAsyncIterator()) }

    struct Iterator: AsyncIteratorProtocol {
        let events: SessionEvents
        var played: Played.AsyncIterator
        var stage = Stage.notStarted

        enum Stage { case notStarted, playing, ended }

        mutating func next() async throws(Played.Failure) -> MeteringEvent? {
            try await next(isolation: nil)
        }

        mutating func next(isolation actor: isolated (any Actor)?) async throws(Played.Failure) -> MeteringEvent? {
            switch stage {
            case .ended:
                return nil
            case .notStarted:
                stage = .playing
                await events.engine.play(channelName: events.session.channelName)
                await events.engine.loadMetadata(events.session.metadataJSON)
            case .playing:
                break
            }
            do throws(Played.Failure) {
                if let event = try await played.next(isolation: actor) { return event }
            } catch {
                stage = .ended
                await events.engine.end()
                throw error
            }
            stage = .ended
            await events.engine.end()
            return nil
        }
    }
}
