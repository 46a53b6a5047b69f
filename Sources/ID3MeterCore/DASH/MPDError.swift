/// Why an MPD cannot be followed.
public struct MPDError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// Not well-formed XML (the parser's line and words, when it gave them).
        case notXML(line: Int?, String?)
        /// Not UTF-8, or declaring another encoding (`declared`): an MPD is UTF-8.
        case notUTF8(declared: String?)
        /// A `<!DOCTYPE>` or `<!ENTITY>`: refused, never expanded.
        case documentType
        case tooManyElements(Int)
        case tooDeep(Int)
        /// The root element is not `MPD`.
        case notMPD(String)
        /// An attribute whose value is not what the schema allows.
        case badAttribute(element: String, name: String, value: String)
        case noPeriod
        /// `type="dynamic"` without `availabilityStartTime`: nothing says which segments exist.
        case dynamicWithoutStart
        /// A segment duration under a millisecond (`duration` / `timescale` s).
        case segmentTooShort(duration: Int, timescale: Int)
        /// A template naming an identifier the spec does not have, or with a bad width format.
        case badTemplate(String)

        public var description: String {
            switch self {
            case .notXML(let line, let detail):
                "not well-formed XML" + (line.map { " (line \($0))" } ?? "") + (detail.map { ": \($0)" } ?? "")
            case .notUTF8(let declared):
                declared.map { "declares encoding '\($0.prefix(40))' (an MPD is UTF-8)" } ?? "not UTF-8 (an MPD is UTF-8)"
            case .documentType: "a document type or entity declaration (refused: an MPD needs none, and entities are how XML is made to expand or read files)"
            case .tooManyElements(let limit): "more than \(limit) elements"
            case .tooDeep(let limit): "elements nested more than \(limit) deep"
            case .notMPD(let name): "the root element is <\(name)>, not <MPD>"
            case .badAttribute(let element, let name, let value): "\(element)@\(name) '\(value.prefix(80))' is not valid"
            case .noPeriod: "no Period"
            case .dynamicWithoutStart: "a dynamic MPD without availabilityStartTime (nothing says which segments exist)"
            case .segmentTooShort(let duration, let timescale): "a segment of \(duration)/\(timescale) s, under a millisecond"
            case .badTemplate(let template): "SegmentTemplate '\(template.prefix(200))' has an unknown identifier or width"
            }
        }
    }

    public var reason: Reason

    public init(_ reason: Reason) {
        self.reason = reason
    }

    public var description: String { "not a usable MPD: \(reason)" }
}
