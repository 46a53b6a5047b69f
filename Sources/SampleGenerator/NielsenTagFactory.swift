import Foundation
import ID3Meter

/// Makes owner strings shaped like real Nielsen DTVR tags (docs/DTVR.md): random bytes stand in
/// for the encrypted CIDs and watermark payload, so the shape is real and the content is not.
public struct NielsenTagFactory {
    private var random: SeededRandom
    private let pcCID: String
    private let fdCID: String

    public init(seed: UInt64) {
        random = SeededRandom(seed: seed)
        pcCID = Self.base64URL(random.bytes(16))
        fdCID = Self.base64URL(random.bytes(16))
    }

    /// `secondsIntoDay` drives both offsets, as on air. A placeholder PC CID comes with a PC
    /// offset of 0, as in the SDK's own sample: a null CID with an offset is the Validator's
    /// error -55.
    public mutating func owner(secondsIntoDay: Int, placeholder: Bool = false) -> String {
        let payload = Self.base64URL(random.bytes(125))
        let offset = String(format: "%05d", secondsIntoDay % 86_400)
        return [NielsenTag.ownerPrefix, placeholder ? NielsenTag.placeholderCID : pcCID, fdCID, payload,
                placeholder ? "00000" : offset, offset, "00"].joined(separator: "/")
    }

    /// An INFO tag: the SDK's periodic description of itself, the null CID as both CIDs and
    /// `00000` as both offsets.
    public mutating func infoOwner() -> String {
        [NielsenTag.ownerPrefix, NielsenTag.placeholderCID, NielsenTag.placeholderCID, Self.base64URL(random.bytes(125)),
         "00000", "00000", "00"].joined(separator: "/")
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }
}
