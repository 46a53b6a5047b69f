import FoundationEssentials

/// Where a resource lives: a URL with a scheme, or a local path. Playlists name their
/// segments relative to themselves (RFC 8216 §4.1), in either world.
package enum Location {
    /// Whether `text` starts with a URL scheme (two or more characters: `C:` is a drive, not a scheme).
    public static func hasScheme(_ text: String) -> Bool {
        // Most text is ASCII up to its colon, told from its bytes: every segment of every reload
        // comes through here, and reading `Character`s cost more than the rest of resolving it.
        var length = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: ":"): return length > 1
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."): length += 1
            case 0x80...: return hasSchemeReadingCharacters(text)
            default: return false
            }
        }
        return false
    }

    /// The same, for text with other than ASCII before its first colon.
    static func hasSchemeReadingCharacters(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else { return false }
        return text[..<colon].allSatisfy { $0.isLetter || $0.isNumber || "+-.".contains($0) } && text[..<colon].count > 1
    }

    /// The protocols an input may use (libavformat's, as far as they can carry MPEG-TS or HLS).
    public static let inputSchemes: Set<String> = ["http", "https", "file", "udp", "rtp", "srt", "tcp"]

    /// Why `input` cannot be an input, when it names a URL that is malformed or of another protocol.
    public static func problem(withInput input: String) -> String? {
        guard hasScheme(input) else { return nil }
        guard let url = URL(string: input), let scheme = url.scheme?.lowercased() else {
            return "'\(input)' is not a well-formed URL"
        }
        guard inputSchemes.contains(scheme) else {
            return "'\(input)': \(scheme) is not a protocol id3-meter reads (\(inputSchemes.sorted().joined(separator: ", ")))"
        }
        // udp://:1234 and the like listen on every interface; only http(s) needs a host.
        if scheme.hasPrefix("http"), url.host?.isEmpty ?? true { return "'\(input)' has no host" }
        return nil
    }

    /// `reference` as its playlist at `base` means it (RFC 3986 for URLs; a path relative to the
    /// playlist's folder for local files).
    public static func resolve(_ reference: String, against base: String) -> String {
        if hasScheme(reference) { return reference }
        if hasScheme(base), let baseURL = URL(string: base), let url = URL(string: reference, relativeTo: baseURL) {
            return url.absoluteString
        }
        if reference.hasPrefix("/") { return reference }
        // Not NSString.deletingLastPathComponent: Foundation traps on a one-character path ("v").
        let directory = base.lastIndex(of: "/").map { base[...$0] } ?? ""
        let joined = directory.isEmpty ? reference : directory + reference
        // A folder stays a folder (a DASH BaseURL `p0/`): what is resolved against it goes inside.
        let standard = standardized(joined)
        return reference.hasSuffix("/") && !standard.hasSuffix("/") ? standard + "/" : standard
    }

    /// A path without its `.` and empty components, each `..` taking the one before it (at the
    /// root there is none to take; a relative path keeps the `..`s it starts with).
    static func standardized(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var kept: [Substring] = []
        for component in path.split(separator: "/") where component != "." {
            if component == "..", let last = kept.last, last != ".." {
                kept.removeLast()
            } else if component != ".." || !absolute {
                kept.append(component)
            }
        }
        let joined = kept.joined(separator: "/")
        return absolute ? "/" + joined : joined.isEmpty ? "." : joined
    }

    /// How `location` is read: over HTTP, from a local file, or as a stream libavformat opens.
    public enum Transport: Sendable, Equatable {
        case http, file, stream
    }

    /// A path or `file:` URL is a file; http(s) goes through the HTTP client; the rest libavformat opens.
    public static func transport(of location: String) -> Transport {
        guard hasScheme(location) else { return .file }
        let scheme = location.prefix { $0 != ":" }.lowercased()
        return scheme == "http" || scheme == "https" ? .http : scheme == "file" ? .file : .stream
    }

    /// The path of a local file named by a path or a `file:` URL.
    public static func filePath(_ location: String) -> String {
        guard hasScheme(location) else { return location }
        return URL(string: location)?.path ?? String(location.drop { $0 != ":" }.dropFirst())
    }

    /// The last path component, for short labels.
    public static func name(_ location: String) -> String {
        let path = hasScheme(location) ? (URL(string: location)?.path ?? location) : location
        // As NSString's `lastPathComponent`: a trailing slash names the folder, the root is "/".
        let components = path.split(separator: "/")
        return components.last.map(String.init) ?? (path.hasPrefix("/") ? "/" : path)
    }
}
