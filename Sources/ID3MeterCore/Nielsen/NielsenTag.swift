/// A Nielsen DTVR tag: the owner identifier of an ID3 PRIV frame that starts
/// `www.nielsen.com`, which is exactly the string a player passes to `sendID3`.
///
/// The shape is `www.nielsen.com/PC CID/FD CID/payload/PC offset/FD offset/breakout`
/// (DOMAIN.md, after Nielsen's ID3 Tag Validator). A tag whose shape is off is kept and
/// carries its issues: an encoder fault is worth reporting, never worth dropping.
public struct NielsenTag: Sendable, Equatable, Hashable {
    /// How a Nielsen PRIV owner starts: the test that makes a frame a Nielsen tag.
    public static let ownerPrefix = "www.nielsen.com"
    /// The length of a Nielsen PRIV owner string; another length is an issue (`NielsenIssue.length`).
    public static let expectedLength = 249
    /// Sent for 10-20 s after a source id change, before the real PC CID is known.
    public static let placeholderCID = "X100zdCIGeIlgZnkYj6UvQ=="

    /// The whole owner string, what `sendID3` is given.
    public let payload: String
    /// Program content ID (encrypted, with its broadcast day), as carried; `nil` when the field is missing.
    public let pcCID: String?
    /// Final distributor ID (encrypted, with its timestamp).
    public let fdCID: String?
    /// The watermark payload, 168 base64url characters.
    public let watermarkData: String?
    /// Seconds since the program content's broadcast day started, 5 digits.
    public let pcOffset: String?
    /// Seconds since the final distributor's broadcast day started, 5 digits.
    public let fdOffset: String?
    /// Always `00` today.
    public let breakout: String?
    /// Why the tag is not valid; empty when it is.
    public let issues: [NielsenIssue]

    /// The tag has the shape Nielsen documents. An invalid tag is still delivered: crediting is Nielsen's call.
    public var isValid: Bool { issues.isEmpty }
    /// The PC CID is the placeholder an encoder sends for 10-20 s after a source ID change; more
    /// than about 20 s of it is a finding.
    public var hasPlaceholderPCCID: Bool { pcCID == Self.placeholderCID }

    /// `nil` when `owner` is not a Nielsen tag at all.
    public init?(owner: String) {
        guard owner.hasPrefix(Self.ownerPrefix) else { return nil }
        payload = owner
        let fields = Self.fields(of: owner)
        func field(_ index: Int) -> String? { index < fields.count ? fields[index] : nil }
        pcCID = field(0)
        fdCID = field(1)
        watermarkData = field(2)
        pcOffset = field(3)
        fdOffset = field(4)
        breakout = field(5)
        issues = NielsenIssue.check(owner: owner, fields: fields)
    }

    /// The `/`-separated fields after the prefix's own `/`, empty ones included. Over the
    /// contiguous UTF-8 bytes: the fields are ASCII, and generic splitting cost a tenth of a scan.
    private static func fields(of owner: String) -> [String] {
        var owner = owner
        return owner.withUTF8 { bytes in
            var fields: [String] = []
            fields.reserveCapacity(7)
            var start = ownerPrefix.utf8.count
            for index in start...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "/") {
                fields.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                start = index + 1
            }
            // What lies between the prefix and the first `/` (nothing, in a well-formed tag) is no field.
            return Array(fields.dropFirst())
        }
    }
}
