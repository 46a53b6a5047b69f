/// Which variant of a master playlist to read. ID3 is the same in every variant, so one is enough.
public enum VariantChoice: Sendable, Equatable, CustomStringConvertible {
    case lowestBandwidth
    case highestBandwidth
    /// The position in the master playlist, from 0.
    case index(Int)

    /// `lowest`, `highest`, or a 0-based position.
    public init?(_ text: String) {
        switch text {
        case "lowest": self = .lowestBandwidth
        case "highest": self = .highestBandwidth
        default:
            guard let index = Int(text), index >= 0 else { return nil }
            self = .index(index)
        }
    }

    public var description: String {
        switch self {
        case .lowestBandwidth: "lowest"
        case .highestBandwidth: "highest"
        case .index(let index): String(index)
        }
    }

    /// The variant this choice names; `nil` when an index is past the end or there are none.
    package func pick(from variants: [Variant]) -> Variant? {
        switch self {
        case .lowestBandwidth: variants.min { $0.bandwidth < $1.bandwidth }
        case .highestBandwidth: variants.max { $0.bandwidth < $1.bandwidth }
        case .index(let index): index < variants.count ? variants[index] : nil
        }
    }
}
