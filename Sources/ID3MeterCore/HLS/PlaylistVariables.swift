import FoundationEssentials

/// A playlist's variables (RFC 8216bis 4.4.2.3 `EXT-X-DEFINE`, 4.3 substitution): defined by
/// `NAME`/`VALUE`, taken from the master playlist (`IMPORT`, media playlists only) or from the
/// playlist URL's query (`QUERYPARAM`), and put in place of each `{$name}` in the URI lines and
/// tags that follow. How Apple has a session token reach every URI.
///
/// Substitution is one pass (a value is not searched for references again), and bounded: the
/// values put in a playlist add at most `maximumExpansion` bytes to it, so a playlist cannot
/// grow without limit through a long value referenced many times.
struct PlaylistVariables {
    /// Every value substituted in one playlist, in bytes.
    static let maximumExpansion = 16 << 20

    private(set) var values: [String: String] = [:]
    private var expanded = 0

    /// Takes an `EXT-X-DEFINE` tag's attributes. `imports` are the master's variables (`nil` in
    /// a master playlist, where `IMPORT` is not allowed); `location` is this playlist's URL.
    mutating func define(_ attributes: AttributeList, imports: [String: String]?, location: String, line: Int) throws(PlaylistError) {
        let name: String, value: String
        if let defined = attributes["NAME"] {
            guard let given = attributes["VALUE"] else { throw PlaylistError(.badDefine("NAME=\"\(defined)\" without VALUE"), line: line) }
            // A value may use the variables defined before it, as hls.js reads it (a quoted
            // string, where RFC 8216bis §4.3 substitutes); what it adds counts to the bound.
            (name, value) = (defined, String(try substitute(Substring(given), line: line)))
        } else if let imported = attributes["IMPORT"] {
            guard let imports else { throw PlaylistError(.badDefine("IMPORT in a master playlist"), line: line) }
            guard let given = imports[imported] else { throw PlaylistError(.undefinedImport(imported), line: line) }
            (name, value) = (imported, given)
        } else if let parameter = attributes["QUERYPARAM"] {
            let query = URLComponents(string: location)?.queryItems ?? []
            guard let given = query.first(where: { $0.name == parameter })?.value else { throw PlaylistError(.missingQueryParameter(parameter), line: line) }
            (name, value) = (parameter, given)
        } else {
            throw PlaylistError(.badDefine("neither NAME, IMPORT nor QUERYPARAM"), line: line)
        }
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw PlaylistError(.badDefine("variable name '\(name)'"), line: line)
        }
        guard values[name] == nil else { throw PlaylistError(.badDefine("'\(name)' defined twice"), line: line) }
        values[name] = value
    }

    /// `line` with each `{$name}` replaced by its value; the line itself when it holds none.
    mutating func substitute(_ line: Substring, line number: Int) throws(PlaylistError) -> Substring {
        // Most lines have no brace at all: one byte scan, no substring search.
        guard line.utf8.contains(UInt8(ascii: "{")), line.contains("{$") else { return line }
        var result = ""
        var rest = line
        while let start = rest.firstRange(of: "{$") {
            result += rest[..<start.lowerBound]
            let afterBrace = rest[start.upperBound...]
            guard let close = afterBrace.firstIndex(of: "}") else { break }
            let name = String(afterBrace[..<close])
            guard let value = values[name] else { throw PlaylistError(.undefinedVariable(name), line: number) }
            expanded += value.utf8.count
            guard expanded <= Self.maximumExpansion else { throw PlaylistError(.variablesTooLarge(Self.maximumExpansion), line: number) }
            result += value
            rest = afterBrace[afterBrace.index(after: close)...]
        }
        result += rest
        return Substring(result)
    }
}
