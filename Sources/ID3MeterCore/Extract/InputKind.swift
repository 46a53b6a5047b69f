import FoundationEssentials

/// What an input is as a whole: a presentation walked segment by segment (an HLS playlist, a
/// DASH MPD), or media bytes read straight into the extractor their first bytes call for.
///
/// What the server says (`Content-Type`) and sends (the first bytes) decides; the name is a
/// hint, read the way a packager writes it: `https://host/channel1.isml/.m3u8` (a name that is
/// only an extension), `master.m3u8;session=abc` (path parameters), a query or a fragment.
package enum InputKind: Sendable, Equatable {
    case hlsPlaylist
    case mpd
    case media

    /// What `location`'s name promises; `nil` when it promises nothing (no extension, or one
    /// id3-meter does not know).
    public static func hinted(by location: String) -> InputKind? {
        let suffix = nameExtension(of: location)
        switch suffix {
        case "m3u8", "m3u": return .hlsPlaylist
        case "mpd": return .mpd
        default: return MediaForm.promised(byExtension: suffix) != nil ? .media : nil
        }
    }

    /// What a server's answer is, from its first bytes (`#EXTM3U`; an XML document whose root
    /// element is `MPD`), then its `Content-Type`; `nil` when neither tells.
    public static func told(contentType: String?, prefix: [UInt8]) -> InputKind? {
        if startsPlaylist(prefix) { return .hlsPlaylist }
        if startsMPD(prefix) { return .mpd }
        let type = contentType?.split(separator: ";").first?.trimmingWhitespace.lowercased() ?? ""
        if playlistTypes.contains(type) { return .hlsPlaylist }
        if type == "application/dash+xml" { return .mpd }
        return MediaForm.sniff(Array(prefix.prefix(MediaForm.sniffLength))) != nil ? .media : nil
    }

    /// RFC 8216 section 4 and the types servers use in practice.
    static let playlistTypes: Set<String> = ["application/vnd.apple.mpegurl", "application/x-mpegurl", "application/mpegurl",
                                             "audio/mpegurl", "audio/x-mpegurl"]

    /// The extension of the last path segment, lower case: after its scheme and host, without a
    /// query, a fragment or path parameters (`;name=value`), and `m3u8` for a segment `.m3u8`.
    package static func nameExtension(of location: String) -> String {
        var path = Substring(location)
        let isURL = Location.hasScheme(location)
        if isURL {
            if let schemeEnd = path.firstRange(of: "://") { path = path[schemeEnd.upperBound...].drop { $0 != "/" } }
            path = path.prefix { $0 != "?" && $0 != "#" }
        }
        var name = path.split(separator: "/").last ?? ""
        if isURL { name = name.prefix { $0 != ";" } }
        guard let dot = name.lastIndex(of: ".") else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }

    /// `#EXTM3U` first, after a byte-order mark or blank lines.
    private static func startsPlaylist(_ prefix: [UInt8]) -> Bool {
        let text = prefix.starts(with: [0xEF, 0xBB, 0xBF]) ? prefix.dropFirst(3) : prefix[...]
        return text.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }.starts(with: Array("#EXTM3U".utf8))
    }

    /// The first element, past the XML declaration, comments and white space, is `MPD` (with
    /// or without a namespace prefix).
    private static func startsMPD(_ prefix: [UInt8]) -> Bool {
        var text = prefix.starts(with: [0xEF, 0xBB, 0xBF]) ? prefix.dropFirst(3) : prefix[...]
        while true {
            text = text.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
            if text.starts(with: Array("<?".utf8)) || text.starts(with: Array("<!--".utf8)) {
                let close: [UInt8] = text.starts(with: Array("<?".utf8)) ? Array("?>".utf8) : Array("-->".utf8)
                guard let end = text.firstRange(of: close) else { return false }
                text = text[end.upperBound...]
                continue
            }
            guard text.first == UInt8(ascii: "<") else { return false }
            let name = text.dropFirst().prefix { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "/")) }
            let local = name.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false).last ?? name
            return Array(local) == Array("MPD".utf8)
        }
    }
}
