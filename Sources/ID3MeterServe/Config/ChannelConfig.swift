import ID3Meter

/// One channel of a line-up, as the config or `PUT /channels/{name}` gives it, with the
/// defaults filled in.
public struct ChannelConfig: Sendable, Equatable {
    /// Unique in the line-up: what `play` is given, and the `channel` of its records.
    public var name: String
    public var url: String
    public var headers: [Fetcher.Header] = []
    /// Certificate authorities trusted besides the line-up's, and a client certificate
    /// (`ca_file`, `client_cert`, `client_key`: the line-up file's only).
    public var tls = Fetcher.TLS()
    public var variant: VariantChoice = .lowestBandwidth
    /// The program of a multi-program MPEG-TS to meter; `nil`: the one that carries timed ID3.
    public var program: Int?
    /// The frame rate when the stream declares none (`--fps`).
    public var fps: Double?
    /// DTVR's ad model: "1" linear, "2" dynamic.
    public var adModel = "1"
    public var appInfo = ReferenceEngine.AppInfo(appID: "PXXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX", appName: "id3-meter", appVersion: "1.0")
    /// Seconds without a creditable tag (or a live playlist stale that long) before an alert.
    public var alertAfter = 30.0
    /// Segments back from the live edge to join at.
    public var liveStart = 3
    /// Seconds between audits of every rendition (`audit_renditions`, given in minutes): a few
    /// segments of each read and their tags compared; `nil`: never.
    public var renditionAudit: Double?
    /// The interval `audit_renditions: true` gives: ten minutes.
    public static let defaultRenditionAudit = 600.0
    /// The stream is meant to end (`vod: true`): at EXT-X-ENDLIST the channel ends. A live
    /// channel's stream is opened again instead, in case the ENDLIST was a packager's glitch.
    public var isVOD = false
    /// Added over the API rather than from the line-up file: kept across a SIGHUP, and fetched
    /// under `hostRule`.
    public var addedOverAPI = false
    /// Where its requests may go (an API channel's: no loopback or private network unless the
    /// file's `api_hosts` allows it); `nil`: anywhere.
    public var hostRule: Fetcher.HostRule?

    public init(name: String, url: String) {
        self.name = name
        self.url = url
    }
}
