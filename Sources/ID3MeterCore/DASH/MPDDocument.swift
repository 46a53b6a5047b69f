import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An MPD's XML as a small tree of elements, read by Foundation's `XMLParser` (libxml2) under
/// the rules untrusted XML needs: no document type at all (so no entity can be declared, expanded
/// or fetched from outside), external entities off, and a bound on elements and nesting, so that
/// a document within the size limit cannot make a tree many times its size.
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

        package func children(named name: String) -> [Element] { children.filter { $0.name == name } }
        package func child(named name: String) -> Element? { children.first { $0.name == name } }
    }

    /// An MPD of a day's 2-second timeline without `r` has 43,200 `S` elements; 250,000 leaves room.
    package static let maximumElements = 250_000
    package static let maximumDepth = 32

    package var root: Element

    /// Reads `bytes` as an XML document; `MPDError` says why it cannot be.
    package static func parse(_ bytes: [UInt8]) throws(MPDError) -> MPDDocument {
        // An MPD is UTF-8 (ISO/IEC 23009-1). Anything else is refused before libxml2 sees it:
        // FoundationXML traps on an element name that is not UTF-8 (a five-byte document did it).
        guard String(validating: bytes, as: UTF8.self) != nil else { throw MPDError(.notUTF8(declared: nil)) }
        if let declared = declaredEncoding(bytes), !["utf-8", "utf8"].contains(declared.lowercased()) {
            throw MPDError(.notUTF8(declared: declared))
        }
        if Self.declaresDocumentType(bytes) { throw MPDError(.documentType) }
        if Self.hasProcessingInstruction(bytes) { throw MPDError(.processingInstruction) }
        let builder = TreeBuilder()
        let parser = XMLParser(data: Data(bytes))
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        parser.delegate = builder
        let parsed = parser.parse()
        if let problem = builder.problem { throw MPDError(problem) }
        guard parsed, let root = builder.root else {
            let line = parser.lineNumber
            throw MPDError(.notXML(line: line > 0 ? line : nil, parser.parserError.map { "\($0.localizedDescription)" }))
        }
        return MPDDocument(root: root)
    }

    /// The `encoding` of the XML declaration at the start, if it names one.
    static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        let head = String(decoding: bytes.prefix(256), as: UTF8.self).drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        guard head.hasPrefix("<?xml"), let end = head.range(of: "?>"),
              let found = head[..<end.lowerBound].range(of: "encoding") else { return nil }
        let rest = head[found.upperBound..<end.lowerBound].drop { $0 == "=" || $0.isWhitespace }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return "" }
        return String(rest.dropFirst().prefix { $0 != quote })
    }

    /// `<!DOCTYPE` (and with it any `<!ENTITY`) anywhere: an MPD has no use for one, and it is how
    /// entity expansion and external entities get in.
    static func declaresDocumentType(_ bytes: [UInt8]) -> Bool {
        let marker = Array("<!".utf8)
        var index = bytes.startIndex
        while let found = bytes[index...].firstIndex(of: marker[0]) {
            let rest = bytes[found...]
            if rest.starts(with: marker) {
                let word = rest.dropFirst(2).prefix(7).map { $0 | 0x20 }   // ASCII lower case
                if word.starts(with: Array("doctype".utf8)) || word.starts(with: Array("entity".utf8)) { return true }
            }
            index = found + 1
        }
        return false
    }

    /// A processing instruction (`<?target data?>`) besides the XML declaration at the start,
    /// outside comments and CDATA. An MPD has no use for one, and FoundationXML crashes on one
    /// without data (`strlen` of a null pointer).
    static func hasProcessingInstruction(_ bytes: [UInt8]) -> Bool {
        let (less, question, bang) = (UInt8(ascii: "<"), UInt8(ascii: "?"), UInt8(ascii: "!"))
        func starts(_ text: String, at index: Int) -> Bool { bytes[index...].starts(with: text.utf8) }
        func skip(past end: String, from index: Int) -> Int? {
            var at = index
            while let next = bytes[at...].firstIndex(of: end.utf8.first!) {
                if starts(end, at: next) { return next + end.utf8.count }
                at = next + 1
            }
            return nil
        }
        var index = bytes.startIndex
        // The declaration: at the very start, after a byte order mark at most.
        if starts("\u{FEFF}", at: index) { index += 3 }
        if starts("<?xml", at: index), index + 5 < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index + 5]) {
            guard let end = skip(past: "?>", from: index) else { return false }
            index = end
        }
        while let open = bytes[index...].firstIndex(of: less) {
            guard open + 1 < bytes.count else { return false }
            if bytes[open + 1] == question { return true }
            if bytes[open + 1] == bang, starts("<!--", at: open) {
                guard let end = skip(past: "-->", from: open + 4) else { return false }
                index = end
            } else if bytes[open + 1] == bang, starts("<![CDATA[", at: open) {
                guard let end = skip(past: "]]>", from: open + 9) else { return false }
                index = end
            } else {
                index = open + 1
            }
        }
        return false
    }

    /// Builds the tree as the parser reports it; stops it at the first bound crossed.
    private final class TreeBuilder: NSObject, XMLParserDelegate {
        var stack: [Element] = []
        var root: Element?
        var count = 0
        var problem: MPDError.Reason?

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            count += 1
            guard count <= MPDDocument.maximumElements else { return stop(parser, .tooManyElements(MPDDocument.maximumElements)) }
            guard stack.count < MPDDocument.maximumDepth else { return stop(parser, .tooDeep(MPDDocument.maximumDepth)) }
            let name = elementName.split(separator: ":").last.map(String.init) ?? elementName
            stack.append(Element(name: name, attributes: attributes))
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            guard let element = stack.popLast() else { return }
            if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += String(decoding: CDATABlock, as: UTF8.self)
        }

        func parser(_ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?) {
            stop(parser, .documentType)
        }

        func parser(_ parser: XMLParser, foundExternalEntityDeclarationWithName name: String, publicID: String?, systemID: String?) {
            stop(parser, .documentType)
        }

        private func stop(_ parser: XMLParser, _ reason: MPDError.Reason) {
            if problem == nil { problem = reason }
            parser.abortParsing()
        }
    }
}
