/// A Nielsen DTVR tag: the owner identifier of an ID3 PRIV frame that starts
/// `www.nielsen.com`, which is exactly the string a player passes to `sendID3`.
///
/// The shape is `www.nielsen.com/PC CID/FD CID/payload/PC offset/FD offset/breakout`
/// (DOMAIN.md, after Nielsen's ID3 Tag Validator). A tag whose shape is off is kept and
/// carries its issues: an encoder fault is worth reporting, never worth dropping.
public struct NielsenTag: Sendable, Equatable, Hashable {
    public static let ownerPrefix = "www.nielsen.com"
    public static let expectedLength = 249
    /// Sent for 10-20 s after a source id change, before the real PC CID is known.
    public static let placeholderCID = "X100zdCIGeIlgZnkYj6UvQ=="

    public let payload: String
    public let pcCID: String?
    public let fdCID: String?
    public let watermarkData: String?
    public let pcOffset: String?
    public let fdOffset: String?
    public let breakout: String?
    public let issues: [NielsenIssue]

    public var isValid: Bool { issues.isEmpty }
    public var hasPlaceholderPCCID: Bool { pcCID == Self.placeholderCID }

    /// `nil` when `owner` is not a Nielsen tag at all.
    public init?(owner: String) {
        guard owner.hasPrefix(Self.ownerPrefix) else { return nil }
        payload = owner
        // Byte-wise: the fields are ASCII, and Character-wise splitting costs more than the whole demux.
        let fields = owner.utf8.dropFirst(Self.ownerPrefix.utf8.count)
            .split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .dropFirst().map { String(decoding: $0, as: UTF8.self) }
        func field(_ index: Int) -> String? { index < fields.count ? fields[index] : nil }
        pcCID = field(0)
        fdCID = field(1)
        watermarkData = field(2)
        pcOffset = field(3)
        fdOffset = field(4)
        breakout = field(5)
        issues = NielsenIssue.check(owner: owner, fields: fields)
    }
}
