/// One way a Nielsen tag's shape departs from what Nielsen's ID3 Tag Validator expects.
public enum NielsenIssue: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The owner is not `NielsenTag.expectedLength` characters long; the length it is.
    case length(Int)
    /// Not six `/`-separated fields after the prefix; how many there are.
    case fieldCount(Int)
    /// The PC CID is not 24 base64 characters.
    case pcCID
    /// The FD CID is not 24 base64 characters.
    case fdCID
    /// The watermark payload is not 168 base64url characters.
    case payload
    /// The PC offset is not 5 digits.
    case pcOffset
    /// The FD offset is not 5 digits.
    case fdOffset
    /// The breakout field is not `00`; what it is.
    case breakout(String)

    /// A stable short name, for reports and machine-readable output.
    public var code: String {
        switch self {
        case .length: "length"
        case .fieldCount: "field_count"
        case .pcCID: "pc_cid"
        case .fdCID: "fd_cid"
        case .payload: "payload"
        case .pcOffset: "pc_offset"
        case .fdOffset: "fd_offset"
        case .breakout: "breakout"
        }
    }

    public var description: String {
        switch self {
        case .length(let length): "owner is \(length) characters, expected \(NielsenTag.expectedLength)"
        case .fieldCount(let count): "\(count) fields after www.nielsen.com, expected 6"
        case .pcCID: "PC CID is not 24 base64 characters"
        case .fdCID: "FD CID is not 24 base64 characters"
        case .payload: "payload is not 168 base64url characters"
        case .pcOffset: "PC offset is not 5 digits"
        case .fdOffset: "FD offset is not 5 digits"
        case .breakout(let value): "breakout is '\(value)', expected 00"
        }
    }

    static func check(owner: String, fields: [String]) -> [NielsenIssue] {
        var issues: [NielsenIssue] = []
        let length = owner.utf8.count
        if length != NielsenTag.expectedLength { issues.append(.length(length)) }
        guard fields.count == 6 else { return issues + [.fieldCount(fields.count)] }
        if !isBase64(fields[0], length: 24) { issues.append(.pcCID) }
        if !isBase64(fields[1], length: 24) { issues.append(.fdCID) }
        if !isBase64(fields[2], length: 168) { issues.append(.payload) }
        if !isDigits(fields[3], length: 5) { issues.append(.pcOffset) }
        if !isDigits(fields[4], length: 5) { issues.append(.fdOffset) }
        if fields[5] != "00" { issues.append(.breakout(fields[5])) }
        return issues
    }

    /// Standard or URL-safe alphabet (both occur), '=' padding only at the end.
    private static func isBase64(_ text: String, length: Int) -> Bool {
        guard text.utf8.count == length else { return false }
        // One pass over the contiguous bytes, a table lookup each, nothing allocated: this runs
        // three times for every tag a scan reads.
        func check(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            base64Alphabet.withUnsafeBufferPointer { isInAlphabet in
                var padding = 0
                for byte in bytes {
                    if byte == UInt8(ascii: "=") {
                        padding += 1
                    } else if padding > 0 || !isInAlphabet[Int(byte)] {
                        return false
                    }
                }
                return padding <= 2
            }
        }
        var text = text
        return text.withUTF8(check)
    }

    /// By byte value: whether it is a letter, a digit, or one of `+/-_`.
    private static let base64Alphabet: [Bool] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }

    private static func isDigits(_ text: String, length: Int) -> Bool {
        text.utf8.count == length && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
