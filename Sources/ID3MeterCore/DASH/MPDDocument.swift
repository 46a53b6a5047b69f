/// An MPD's XML as a small tree of elements, read by `XMLTreeReader` under the rules untrusted
/// XML needs: no document type at all (so no entity can be declared, expanded or fetched from
/// outside), and a bound on elements and nesting, so that a document within the size limit
/// cannot make a tree many times its size.
package struct MPDDocument: Sendable {
    /// An element: its name without a namespace prefix, its attributes as written, its text.
    package struct Element: Sendable {
        package var name: String
        package var attributes: [String: String]
        package var children: [Element] = []
        package var text = ""

        package func attribute(_ name: String) -> String? { attributes[name] }

        /// `xlink:href`, whatever prefix the document bound XLink to.
        package var xlinkHref: String? {
            attributes["xlink:href"] ?? attributes.first { $0.key.hasSuffix(":href") }?.value
        }

        /// Whether the reference is to be resolved when the MPD is read (`xlink:actuate="onLoad"`);
        /// the default, `onRequest`, waits for the player to reach it.
        package var resolvesOnLoad: Bool {
            (attributes["xlink:actuate"] ?? attributes.first { $0.key.hasSuffix(":actuate") }?.value) == "onLoad"
        }

        package func children(named name: String) -> [Element] { children.filter { $0.name == name } }
        package func child(named name: String) -> Element? { children.first { $0.name == name } }
    }

    /// An MPD of a day's 2-second timeline without `r` has 43,200 `S` elements; 250,000 leaves room.
    package static let maximumElements = 250_000
    package static let maximumDepth = 32

    package var root: Element

    /// Reads `bytes` as an XML document; `MPDError` says why it cannot be.
    package static func parse(_ bytes: [UInt8]) throws(MPDError) -> MPDDocument {
        // An MPD is UTF-8 (ISO/IEC 23009-1).
        guard String(validating: bytes, as: UTF8.self) != nil else { throw MPDError(.notUTF8(declared: nil)) }
        if let declared = declaredEncoding(bytes), !["utf-8", "utf8"].contains(declared.lowercased()) {
            throw MPDError(.notUTF8(declared: declared))
        }
        return MPDDocument(root: try XMLTreeReader.read(bytes))
    }

    /// Elements a remote reference resolves to (an `xlink:href` Period's document): zero or more
    /// top-level elements, read as children of a wrapper, under the same rules and bounds.
    package static func fragment(_ bytes: [UInt8]) throws(MPDError) -> [Element] {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw MPDError(.notUTF8(declared: nil)) }
        if let declared = declaredEncoding(bytes), !["utf-8", "utf8"].contains(declared.lowercased()) {
            throw MPDError(.notUTF8(declared: declared))
        }
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        // The declaration may only open a document, not the wrapper's content.
        if body.starts(with: "<?xml".utf8), let end = body.firstRange(of: "?>".utf8) { body = body[end.upperBound...] }
        return try XMLTreeReader.read(Array("<fragment>".utf8) + body + Array("</fragment>".utf8)).children
    }

    /// The `encoding` of the XML declaration at the start, if it names one.
    static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        var head = bytes.prefix(256)
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { head = head.dropFirst(3) }
        head = head.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard head.starts(with: "<?xml".utf8), let end = head.firstRange(of: "?>".utf8),
              let found = head[..<end.lowerBound].firstRange(of: "encoding".utf8) else { return nil }
        let rest = head[found.upperBound..<end.lowerBound].drop { $0 == UInt8(ascii: "=") || $0 == 0x20 || $0 == 0x09 }
        guard let quote = rest.first, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else { return "" }
        return String(decoding: rest.dropFirst().prefix { $0 != quote }, as: UTF8.self)
    }
}
