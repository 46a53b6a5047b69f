/// A Nielsen DTVR tag: the owner identifier of an ID3 PRIV frame that starts
/// `www.nielsen.com`, which is exactly the string a player passes to `sendID3`.
///
/// The shape is `www.nielsen.com/PC CID/FD CID/payload/PC offset/FD offset/breakout`
/// (docs/DTVR.md, after Nielsen's ID3 Tag Validator). A tag whose shape is off is kept and
/// carries its issues: an encoder fault is worth reporting, never worth dropping.
public struct NielsenTag: Sendable, Hashable {
    /// How a Nielsen PRIV owner starts: the test that makes a frame a Nielsen tag.
    public static let ownerPrefix = "www.nielsen.com"
    /// The length of a Nielsen PRIV owner string; another length is an issue (`NielsenIssue.length`).
    public static let expectedLength = 249
    /// Sent for 10-20 s after a source id change, before the real PC CID is known.
    public static let placeholderCID = "X100zdCIGeIlgZnkYj6UvQ=="

    /// The whole owner string, what `sendID3` is given.
    public let payload: String
    /// Why the tag is not valid; empty when it is.
    public let issues: [NielsenIssue]
    /// Where the fields lie in the payload's UTF-8 bytes. The field strings are made when asked
    /// for: a scan writes two of them per tag and never the watermark.
    private let fields: FieldBounds

    /// The fields after the prefix, in order.
    enum Field: Int {
        case pcCID, fdCID, watermarkData, pcOffset, fdOffset, breakout
    }

    /// Program content ID (encrypted, with its broadcast day), as carried; `nil` when the field is missing.
    public var pcCID: String? { field(.pcCID) }
    /// Final distributor ID (encrypted, with its timestamp).
    public var fdCID: String? { field(.fdCID) }
    /// The watermark payload, 168 base64url characters.
    public var watermarkData: String? { field(.watermarkData) }
    /// Seconds since the program content's broadcast day started, 5 digits.
    public var pcOffset: String? { field(.pcOffset) }
    /// Seconds since the final distributor's broadcast day started, 5 digits.
    public var fdOffset: String? { field(.fdOffset) }
    /// Always `00` today.
    public var breakout: String? { field(.breakout) }

    /// The tag has the shape Nielsen documents. An invalid tag is still delivered: crediting is Nielsen's call.
    public var isValid: Bool { issues.isEmpty }

    /// What a tag is, as far as its visible fields tell: the Validator knows from the decrypted
    /// payload, which needs Nielsen's keys. An INFO tag (the SDK's periodic description of
    /// itself) carries the null CID as both CIDs and `00000` as both offsets, and nothing else
    /// does; every other tag is taken for a DATA tag, the one that carries watermarks.
    public enum Kind: String, Sendable { case data, info }
    public let kind: Kind
    /// A DATA tag whose PC CID is the null CID: the SDK sends one for 10-20 s after the watermark
    /// source changes, before it knows the new one; more than about 20 s of them is a finding.
    public let hasPlaceholderPCCID: Bool
    /// A null CID whose offset is not `00000`: the Validator's CID timestamp-offset error (-55).
    public let hasOffsetOnNullCID: Bool

    /// A valid DATA tag with its PC CID known: one that can credit a viewer.
    public var isCreditable: Bool { isValid && kind == .data && !hasPlaceholderPCCID }

    /// `nil` when `owner` is not a Nielsen tag at all.
    public init?(owner: String) {
        guard owner.hasPrefix(Self.ownerPrefix) else { return nil }
        payload = owner
        var owner = owner
        (fields, issues, kind, hasPlaceholderPCCID, hasOffsetOnNullCID) = owner.withUTF8 { bytes in
            let fields = FieldBounds(of: bytes, after: Self.ownerPrefix.utf8.count)
            let field = FieldBytes(payload: bytes, bounds: fields)
            func null(_ cid: Field) -> Bool { field[cid].map { $0.elementsEqual(Self.placeholderCID.utf8) } ?? false }
            func zero(_ offset: Field) -> Bool { field[offset].map { $0.elementsEqual("00000".utf8) } ?? false }
            let pcNull = null(.pcCID), fdNull = null(.fdCID), pcZero = zero(.pcOffset), fdZero = zero(.fdOffset)
            let kind: Kind = pcNull && fdNull && pcZero && fdZero ? .info : .data
            // An offset that is not 5 digits is already an issue of its own.
            func offset(_ offset: Field, nonZeroOn isNull: Bool) -> Bool {
                isNull && !zero(offset) && (field[offset].map { $0.count == 5 && $0.allSatisfy { (48...57).contains($0) } } ?? false)
            }
            return (fields, NielsenIssue.check(bytes, fields: fields), kind, kind == .data && pcNull,
                    offset(.pcOffset, nonZeroOn: pcNull) || offset(.fdOffset, nonZeroOn: fdNull))
        }
    }

    /// The tag is its payload: the rest is read from it.
    public static func == (lhs: NielsenTag, rhs: NielsenTag) -> Bool { lhs.payload == rhs.payload }
    public func hash(into hasher: inout Hasher) { hasher.combine(payload) }

    private func field(_ field: Field) -> String? {
        guard field.rawValue < fields.count else { return nil }
        let utf8 = payload.utf8, range = fields[field.rawValue]
        // Fields are cut at '/', so their ends are character boundaries.
        return String(payload[utf8.index(utf8.startIndex, offsetBy: range.lowerBound)..<utf8.index(utf8.startIndex, offsetBy: range.upperBound)])
    }

    /// The payload's UTF-8 bytes and its fields' among them, for a writer that needs no strings.
    struct FieldBytes {
        let payload: UnsafeBufferPointer<UInt8>
        fileprivate let bounds: FieldBounds

        /// `nil` when the field is missing.
        subscript(field: Field) -> UnsafeBufferPointer<UInt8>? {
            field.rawValue < bounds.count ? UnsafeBufferPointer(rebasing: payload[bounds[field.rawValue]]) : nil
        }
    }

    func withFieldBytes<R>(_ body: (FieldBytes) -> R) -> R {
        var payload = payload
        return payload.withUTF8 { body(FieldBytes(payload: $0, bounds: fields)) }
    }
}

/// The `/`-separated fields after the prefix's own `/`, empty ones included, as byte ranges of
/// the owner: how many there are and where the first six lie. Found over the contiguous
/// UTF-8 bytes; the fields are ASCII, and generic splitting cost a tenth of a scan.
struct FieldBounds: Sendable {
    /// Fields after the prefix's `/` (what lies between the prefix and that `/`, nothing in a
    /// well-formed tag, is no field).
    private(set) var count = 0
    private var starts = (0, 0, 0, 0, 0, 0)
    private var ends = (0, 0, 0, 0, 0, 0)

    init(of bytes: UnsafeBufferPointer<UInt8>, after prefixLength: Int) {
        guard prefixLength <= bytes.count else { return }
        var start = prefixLength
        var seenPrefixSlash = false
        while true {
            let end = bytes.firstIndex(of: UInt8(ascii: "/"), from: start) ?? bytes.count
            if seenPrefixSlash {
                if count < 6 { set(count, start..<end) }
                count += 1
            }
            seenPrefixSlash = true
            guard end < bytes.count else { return }
            start = end + 1
        }
    }

    /// The range of field `index`, which is below 6 and `count`.
    subscript(index: Int) -> Range<Int> {
        switch index {
        case 0: starts.0..<ends.0
        case 1: starts.1..<ends.1
        case 2: starts.2..<ends.2
        case 3: starts.3..<ends.3
        case 4: starts.4..<ends.4
        default: starts.5..<ends.5
        }
    }

    private mutating func set(_ index: Int, _ range: Range<Int>) {
        switch index {
        case 0: (starts.0, ends.0) = (range.lowerBound, range.upperBound)
        case 1: (starts.1, ends.1) = (range.lowerBound, range.upperBound)
        case 2: (starts.2, ends.2) = (range.lowerBound, range.upperBound)
        case 3: (starts.3, ends.3) = (range.lowerBound, range.upperBound)
        case 4: (starts.4, ends.4) = (range.lowerBound, range.upperBound)
        default: (starts.5, ends.5) = (range.lowerBound, range.upperBound)
        }
    }
}
