/// Reads the XML an MPD is written in into `MPDDocument.Element`s, in Swift, byte by byte: a
/// document served by anyone, read for weeks by `serve`, goes through no C library (FoundationXML,
/// libxml2's glue, leaked on every malformed document, trapped on one name and crashed on one
/// processing instruction) and through nothing that can fetch, expand or include.
///
/// What it reads: the XML declaration, elements and attributes (either quote), text, CDATA
/// sections, comments, and the five predefined entities and character references in text and
/// values. A processing instruction is stepped over. A document type (hence any declared entity)
/// is refused; an entity the five do not name is an error, as it is without a DTD. Names keep
/// their prefix as written (the tree strips it from element names); namespaces are not resolved.
///
/// The input is valid UTF-8 (`MPDDocument.parse` checks), so text cut at ASCII delimiters is
/// UTF-8 too. Every loop advances through the bytes, so reading is linear in their number; the
/// element count and depth are bounded as the elements open.
struct XMLTreeReader {
    private let bytes: [UInt8]
    private var index = 0
    /// The open elements, innermost last, with their names as written (for the end tags).
    private var open: [(element: MPDDocument.Element, name: String)] = []
    private var root: MPDDocument.Element?
    private var elements = 0

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    static func read(_ bytes: [UInt8]) throws(MPDError) -> MPDDocument.Element {
        var reader = XMLTreeReader(bytes)
        return try reader.document()
    }

    private mutating func document() throws(MPDError) -> MPDDocument.Element {
        if starts(with: [0xEF, 0xBB, 0xBF]) { index += 3 }   // a byte order mark
        if starts(with: "<?xml"), index + 5 < bytes.count, Self.isSpace(bytes[index + 5]) { try skip(past: "?>", what: "XML declaration") }
        while index < bytes.count {
            if bytes[index] != UInt8(ascii: "<") {
                try text()
            } else if starts(with: "<!--") {
                try skip(past: "-->", what: "comment")
            } else if starts(with: "<![CDATA[") {
                index += 9
                let start = index
                try skip(past: "]]>", what: "CDATA section")
                try append(text(start..<(index - 3)))
            } else if starts(with: "<!") {
                let word = bytes[(index + 2)...].prefix(7).map { $0 | 0x20 }   // ASCII lower case
                if word.starts(with: "doctype".utf8) || word.starts(with: "entity".utf8) { throw MPDError(.documentType) }
                throw failure("a markup declaration")
            } else if starts(with: "<?") {
                try skip(past: "?>", what: "processing instruction")
            } else if starts(with: "</") {
                try endTag()
            } else {
                try startTag()
            }
        }
        if let innermost = open.last { throw failure("<\(innermost.name)> is not closed") }
        guard let root else { throw failure("no root element") }
        return root
    }

    // MARK: Markup

    private mutating func startTag() throws(MPDError) {
        guard root == nil else { throw failure("content after the root element") }
        index += 1
        let name = try self.name()
        var element = MPDDocument.Element(name: name.lastIndex(of: ":").map { String(name[name.index(after: $0)...]) } ?? name, attributes: [:])
        while true {
            let spaced = skipSpace()
            guard index < bytes.count else { throw failure("<\(name) is not closed") }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                return try opened(element, name: name)
            }
            if starts(with: "/>") {
                index += 2
                try opened(element, name: name)
                return close()
            }
            guard spaced else { throw failure("no space before an attribute of <\(name)>") }
            let attribute = try self.name()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { throw failure("attribute \(attribute) of <\(name)> has no value") }
            index += 1
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw failure("attribute \(attribute) of <\(name)> is not quoted")
            }
            let quote = bytes[index]
            index += 1
            guard let end = bytes[index...].firstIndex(of: quote) else { throw failure("attribute \(attribute) of <\(name)> is not closed") }
            let raw = bytes[index..<end]
            index = end + 1
            guard !raw.contains(UInt8(ascii: "<")) else { throw failure("'<' in attribute \(attribute) of <\(name)>") }
            guard element.attributes[attribute] == nil else { throw failure("attribute \(attribute) twice in <\(name)>") }
            // Attribute-value normalisation (XML 1.0 §3.3.3): a line end or a tab is a space
            // (before references are replaced: one that writes a line feed keeps it).
            var normalised = ArraySlice(raw.enumerated().compactMap { offset, byte -> UInt8? in
                if byte == 0x0D, raw.dropFirst(offset + 1).first == 0x0A { return nil }
                return byte == 0x09 || byte == 0x0A || byte == 0x0D ? 0x20 : byte
            })
            if !raw.contains(where: { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { normalised = raw }
            element.attributes[attribute] = try decoded(normalised)
        }
    }

    private mutating func opened(_ element: MPDDocument.Element, name: String) throws(MPDError) {
        elements += 1
        guard elements <= MPDDocument.maximumElements else { throw MPDError(.tooManyElements(MPDDocument.maximumElements)) }
        guard open.count < MPDDocument.maximumDepth else { throw MPDError(.tooDeep(MPDDocument.maximumDepth)) }
        open.append((element, name))
    }

    private mutating func endTag() throws(MPDError) {
        index += 2
        let name = try self.name()
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else { throw failure("</\(name) is not closed") }
        index += 1
        guard let innermost = open.last else { throw failure("</\(name)> closes nothing") }
        guard innermost.name == name else { throw failure("</\(name)> closes <\(innermost.name)>") }
        close()
    }

    /// The innermost open element is complete: it joins its parent, or is the root.
    private mutating func close() {
        guard let (element, _) = open.popLast() else { return }
        if open.isEmpty { root = element } else { open[open.count - 1].element.children.append(element) }
    }

    /// A name: up to a space, `/`, `>`, `=` or a quote; it may not start with a digit, `-` or `.`.
    private mutating func name() throws(MPDError) -> String {
        let start = index
        while index < bytes.count, !Self.endsName(bytes[index]) { index += 1 }
        guard index > start, !Self.cannotStartName(bytes[start]) else { throw failure("a tag or attribute without a valid name") }
        return text(start..<index)
    }

    // MARK: Character data

    /// Text up to the next `<`: the open element's, or only white space outside the root.
    private mutating func text() throws(MPDError) {
        let start = index
        index = bytes[index...].firstIndex(of: UInt8(ascii: "<")) ?? bytes.count
        let run = bytes[start..<index]
        if open.isEmpty {
            guard run.allSatisfy(Self.isSpace) else { throw failure(root == nil ? "text before the root element" : "text after the root element") }
            return
        }
        try append(decoded(run))
    }

    private mutating func append(_ text: String) throws(MPDError) {
        guard !open.isEmpty else { throw failure("character data outside the root element") }
        open[open.count - 1].element.text += text
    }

    /// `raw` with its entity and character references replaced.
    private func decoded(_ raw: ArraySlice<UInt8>) throws(MPDError) -> String {
        guard let firstAmpersand = raw.firstIndex(of: UInt8(ascii: "&")) else { return Self.text(raw) }
        var result = Self.text(raw[..<firstAmpersand])
        var rest = raw[firstAmpersand...]
        while let ampersand = rest.firstIndex(of: UInt8(ascii: "&")) {
            result += Self.text(rest[..<ampersand])
            guard let semicolon = rest[ampersand...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw failure("a '&' that starts no reference")
            }
            let reference = Self.text(rest[(ampersand + 1)..<semicolon])
            guard let character = Self.character(reference) else { throw failure("unknown reference &\(reference);") }
            result.unicodeScalars.append(character)
            rest = rest[(semicolon + 1)...]
        }
        return result + Self.text(rest)
    }

    /// The bytes as a string, through the contiguous fast path (an `ArraySlice` took the slow,
    /// element-by-element one).
    private static func text(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    }

    private func text(_ range: Range<Int>) -> String { Self.text(bytes[range]) }

    /// A predefined entity's character, or a character reference's (`#N`, `#xH`), if XML allows it.
    private static func character(_ reference: String) -> Unicode.Scalar? {
        switch reference {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        case "apos": return "'"
        default:
            guard reference.hasPrefix("#") else { return nil }
            let digits = reference.dropFirst()
            let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            // XML 1.0 §2.2: no NUL and no other C0 control but tab, line feed and carriage return.
            guard let value, value >= 0x20 || [0x09, 0x0A, 0x0D].contains(value) else { return nil }
            return Unicode.Scalar(value)
        }
    }

    // MARK: Bytes

    private func starts(with text: String) -> Bool { bytes[index...].starts(with: text.utf8) }
    private func starts(with prefix: [UInt8]) -> Bool { bytes[index...].starts(with: prefix) }

    /// Moves past the next `end`; an error naming `what` when there is none.
    private mutating func skip(past end: String, what: String) throws(MPDError) {
        let pattern = Array(end.utf8)
        var at = index
        while let found = bytes[at...].firstIndex(of: pattern[0]) {
            if bytes[found...].starts(with: pattern) {
                index = found + pattern.count
                return
            }
            at = found + 1
        }
        throw failure("a \(what) is not closed")
    }

    @discardableResult
    private mutating func skipSpace() -> Bool {
        let start = index
        while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
        return index > start
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static func endsName(_ byte: UInt8) -> Bool {
        isSpace(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "=")
            || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") || byte == UInt8(ascii: "<")
    }

    private static func cannotStartName(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    /// Not well-formed, at the line `index` is on.
    private func failure(_ detail: String) -> MPDError {
        let line = bytes[..<min(index, bytes.count)].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        return MPDError(.notXML(line: line, detail))
    }
}
