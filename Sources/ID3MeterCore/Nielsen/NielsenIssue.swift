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

    /// The issues of the owner `bytes` whose fields lie at `fields`.
    static func check(_ bytes: UnsafeBufferPointer<UInt8>, fields: FieldBounds) -> [NielsenIssue] {
        var issues: [NielsenIssue] = []
        if bytes.count != NielsenTag.expectedLength { issues.append(.length(bytes.count)) }
        guard fields.count == 6 else { return issues + [.fieldCount(fields.count)] }
        func field(_ index: Int) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[fields[index]]) }
        if !isBase64(field(0), length: 24) { issues.append(.pcCID) }
        if !isBase64(field(1), length: 24) { issues.append(.fdCID) }
        if !isBase64(field(2), length: 168) { issues.append(.payload) }
        if !isDigits(field(3), length: 5) { issues.append(.pcOffset) }
        if !isDigits(field(4), length: 5) { issues.append(.fdOffset) }
        if !field(5).elementsEqual("00".utf8) { issues.append(.breakout(String(decoding: field(5), as: UTF8.self))) }
        return issues
    }

    /// Standard or URL-safe alphabet (both occur), '=' padding only at the end. A table lookup
    /// a byte, nothing allocated and no branch per byte: this runs three times for every tag a
    /// scan reads.
    private static func isBase64(_ bytes: UnsafeBufferPointer<UInt8>, length: Int) -> Bool {
        guard bytes.count == length else { return false }
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "=") { end -= 1 }
        guard bytes.count - end <= 2 else { return false }
        return base64Alphabet.withUnsafeBufferPointer { isInAlphabet in
            var all: UInt8 = 1
            for byte in bytes[..<end] { all &= isInAlphabet[Int(byte)] }
            return all == 1
        }
    }

    /// By byte value: 1 for a letter, a digit, or one of `+/-_`.
    private static let base64Alphabet: [UInt8] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "_"): 1
        default: 0
        }
    }

    private static func isDigits(_ bytes: UnsafeBufferPointer<UInt8>, length: Int) -> Bool {
        bytes.count == length && bytes.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
