/// Who may use `serve`'s API and how much of the process it may take: a control plane's limits.
public struct APIPolicy: Sendable {
    /// Who may read and change the line-up; `nil`: anyone who reaches it (a loopback listener).
    public var tokens: APITokens?
    /// Channels the line-up may hold (`--max-channels`): a PUT of a new one past it is refused.
    public var maximumChannels = 5_000
    /// Connections open at once (`--api-max-connections`): past it the longest idle is closed.
    public var maximumConnections = 1_000
    /// Seconds a connection has to send a whole request after opening or its last answer.
    public var requestTimeout = 15.0
    /// URL schemes a channel added over the API may use (`--api-allow-scheme` adds to http(s)).
    public var schemes: Set<String> = ["http", "https"]

    public init(tokens: APITokens? = nil) {
        self.tokens = tokens
    }

    /// A channel's JSON is small; more than this is refused (413).
    static let maximumBodyBytes = 64 << 10
    /// The most a request's head may hold: a token and a few headers fit many times over.
    static let maximumHeadBytes = 16 << 10
    static let maximumHeaderCount = 100
}
