import Foundation

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
        let metadata = ["type": "content", "adModel": adModel]
        return (try? JSONSerialization.data(withJSONObject: metadata, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// Returns the number of `sendID3` calls made.
    @discardableResult
    public func run<S: AsyncSequence & Sendable, C: Clock>(_ source: S, feeder: Feeder<C>, engine: any MeteringEngine,
                                                          playback: @Sendable (PlaybackEvent) async -> Void = { _ in },
                                                          problem: @Sendable (MediaEvent) async -> Void = { _ in }) async -> Int
    where S.Element == MediaEvent, S.Failure == Never, C.Duration == Duration {
        await engine.play(channelName: channelName)
        await engine.loadMetadata(metadataJSON)
        let calls = await feeder.run(source, engine: engine, playback: playback, problem: problem)
        await engine.end()
        return calls
    }

    /// A channel name from a stream's URL: the playlist's name, or its folder's when the
    /// name is a generic one like `index` or `master`.
    public static func channelName(for input: String) -> String {
        let components = input.split(separator: "?").first.map { $0.split(separator: "/") } ?? []
        let stem = components.last.map { String($0.split(separator: ".").first ?? $0) } ?? ""
        let generic = ["index", "master", "playlist", "prog_index", "live", "stream", "main"]
        if generic.contains(stem.lowercased()), components.count >= 2 {
            let folder = String(components[components.count - 2])
            if !folder.hasSuffix(":") { return folder }
        }
        return stem.isEmpty ? "defaultChannelName" : stem
    }
}
