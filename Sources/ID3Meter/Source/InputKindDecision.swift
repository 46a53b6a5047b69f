extension InputKind {
    /// What `input` is, in the one way every command decides it: a name that promises a playlist
    /// or an MPD is taken at its word (a player asks for it as that); any other local file or
    /// HTTP resource is asked for its first bytes and type (`InputKind.told`). udp, srt, rtp and
    /// tcp carry media. What cannot be asked is taken as media, whose read then says why.
    static func of(_ input: String, fetcher: Fetcher) async -> InputKind {
        let hint = hinted(by: input)
        if hint == .hlsPlaylist || hint == .mpd { return hint! }
        let transport = Location.transport(of: input)
        // A local file named as media is read as such (a folder of thousands is not opened twice).
        if transport == .stream || transport == .file && hint == .media { return .media }
        guard let peeked = try? await fetcher.peek(input) else { return .media }
        return told(contentType: peeked.contentType, prefix: peeked.prefix) ?? .media
    }
}
