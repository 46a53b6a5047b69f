import Foundation

/// Who may use `serve`'s API: named bearer tokens, each read-only or read-write, so that one
/// can be rotated while the other still works. Read from a file or an environment variable,
/// never from a flag's value (which `ps` shows). One token a line: `NAME read|write TOKEN`;
/// blank lines and `#` comments are skipped.
public struct APITokens: Sendable {
    public enum Access: String, Sendable { case read, write }

    public struct Token: Sendable {
        public var name: String
        public var access: Access
        fileprivate var secret: [UInt8]
    }

    public private(set) var tokens: [Token]

    /// A token shorter than this is refused: it could be guessed.
    static let minimumLength = 16

    /// The tokens in the file at `path`.
    public static func load(_ path: String) throws(ConfigError) -> APITokens {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw ConfigError(file: path, reason: .unreadable(nil)) }
        return try APITokens(text, source: path)
    }

    /// Parses the lines of `text`, read from `source` (named in errors).
    public init(_ text: String, source: String) throws(ConfigError) {
        tokens = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 3, let access = Access(rawValue: String(fields[1])) else {
                throw ConfigError(file: source, line: index + 1, field: nil, reason: .mustBe("'NAME read|write TOKEN'"))
            }
            guard fields[2].utf8.count >= Self.minimumLength else {
                throw ConfigError(file: source, line: index + 1, field: nil,
                                  reason: .tokenTooShort(String(fields[0]), minimum: Self.minimumLength))
            }
            guard !tokens.contains(where: { $0.name == fields[0] }) else {
                throw ConfigError(file: source, line: index + 1, field: nil, reason: .tokenNameTwice(String(fields[0])))
            }
            tokens.append(Token(name: String(fields[0]), access: access, secret: Array(fields[2].utf8)))
        }
        guard !tokens.isEmpty else { throw ConfigError(file: source, reason: .noToken) }
    }

    /// The token `presented` is, compared in constant time with every token (how long it takes
    /// says nothing of how much of it matched, nor which one it was).
    public func token(for presented: some Collection<UInt8>) -> Token? {
        var found: Token?
        for token in tokens where Self.equal(token.secret, presented) { found = token }
        return found
    }

    /// Equal in every byte and in length: the lengths' difference is kept whole (a token with 256
    /// bytes more is not the token), the bytes compared over the secret's length whatever matched.
    static func equal(_ secret: [UInt8], _ presented: some Collection<UInt8>) -> Bool {
        var difference = UInt(bitPattern: secret.count ^ presented.count)
        var index = presented.startIndex
        for offset in 0..<secret.count {
            let byte = index < presented.endIndex ? presented[index] : 0
            difference |= UInt(secret[offset] ^ byte)
            if index < presented.endIndex { presented.formIndex(after: &index) }
        }
        return difference == 0
    }
}
