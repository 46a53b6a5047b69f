/// A `SegmentTemplate` `@media` or `@initialization` (§5.3.9.4.4): text with `$RepresentationID$`,
/// `$Number$`, `$Bandwidth$`, `$Time$` (the last three with an optional `%0<width>d`) and `$$`.
/// Checked once when the MPD is read; filled in for each segment.
package struct URLTemplate: Sendable, Equatable {
    enum Part: Sendable, Equatable {
        case text(String)
        case representationID
        case number(width: Int)
        case bandwidth(width: Int)
        case time(width: Int)
    }

    /// Wider than any number a segment can have: a width is a hostile stream's way to make huge URLs.
    static let maximumWidth = 20

    let parts: [Part]
    package let text: String

    /// `nil` when an identifier is unknown, a `$` is unclosed, or a width is malformed.
    package init?(_ text: String) {
        self.text = text
        var parts: [Part] = []
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            if dollar > rest.startIndex { parts.append(.text(String(rest[..<dollar]))) }
            let afterOpen = rest.index(after: dollar)
            guard let close = rest[afterOpen...].firstIndex(of: "$") else { return nil }
            let identifier = rest[afterOpen..<close]
            rest = rest[rest.index(after: close)...]
            if identifier.isEmpty {
                parts.append(.text("$"))
                continue
            }
            let (name, format) = identifier.firstIndex(of: "%").map { (identifier[..<$0], identifier[$0...]) } ?? (identifier, "")
            var width = 1
            if !format.isEmpty {
                // %0<width>d; `%d` and a width without the 0 are read too (padded with zeros, as players do).
                let middle = format.dropFirst().dropLast()
                guard format.last == "d", middle.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
                if !middle.isEmpty {
                    guard let given = Int(middle), given >= 1, given <= Self.maximumWidth else { return nil }
                    width = given
                }
            }
            switch name {
            case "RepresentationID" where format.isEmpty: parts.append(.representationID)
            case "Number": parts.append(.number(width: width))
            case "Bandwidth": parts.append(.bandwidth(width: width))
            case "Time": parts.append(.time(width: width))
            default: return nil
            }
        }
        if !rest.isEmpty { parts.append(.text(String(rest))) }
        self.parts = parts
    }

    /// Whether segments are named by their number (else by their time, or neither).
    package var usesNumber: Bool { parts.contains { if case .number = $0 { true } else { false } } }
    package var usesTime: Bool { parts.contains { if case .time = $0 { true } else { false } } }

    package func filled(representationID: String, bandwidth: Int, number: Int? = nil, time: Int? = nil) -> String {
        var url = ""
        for part in parts {
            switch part {
            case .text(let text): url += text
            case .representationID: url += representationID
            case .number(let width): url += Self.padded(number ?? 0, width)
            case .bandwidth(let width): url += Self.padded(bandwidth, width)
            case .time(let width): url += Self.padded(time ?? 0, width)
            }
        }
        return url
    }

    private static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
