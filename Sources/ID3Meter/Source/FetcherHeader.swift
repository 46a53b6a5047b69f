extension Fetcher {
    /// A request header sent with every HTTP request for an input (`--header 'Name: value'`): the
    /// tokens, cookies or user agent a CDN asks for.
    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String

        /// A header as given; `init?(_:)` is the checked form for text from outside.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }

        /// `Name: value`; `nil` when there is no colon, the name is empty or not a token, or either
        /// part holds a line break (which would smuggle in another header).
        public init?(_ line: String) {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = String(line[..<colon]).trimmingCharacters(in: .whitespaces)
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            let token = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
            guard !name.isEmpty, name.allSatisfy(token.contains), !value.contains(where: \.isNewline) else { return nil }
            self.init(name: name, value: value)
        }

        /// Headers that carry a credential, not sent on to another host when a server redirects.
        var isCredential: Bool { ["authorization", "cookie", "proxy-authorization"].contains(name.lowercased()) }
    }
}
