import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// FFmpeg 5.1 delivers timed-ID3 packets without their first 5 bytes; newer versions deliver
/// them whole. The same code must read both.
@Suite("FFmpeg 5.1 cut headers")
struct CutHeaderRepairTests {
    static let owner = "www.nielsen.com/X100zdCIGeIlgZnkYj6UvQ==/R8WHe7pEBeqBhu8jTeXydg==/AAICoyitYqlxT7n6aZ0oMCGheFi4CXFp46AMUPZz1lMr_M9tr3_cjee1SHqxrOiVerMDLeyn9xzocZSKwi746Re8vNOtpNCAZjYABs_J0R25IHpvOc1HS8QHGgD5TgOJeS6gX100zdCIGeIlgZnkYj6UvVJWFNhSVhTiPE0=/00000/46016/00"

    static func nielsenTag(_ version: ID3Tag.Version) -> [UInt8] {
        ID3TagSpec(version: version, frames: [.priv(owner: owner, data: [0x41])], extraFlags: 0x20).bytes()
    }

    @Test func theNielsenTagIs271Bytes() {
        #expect(Self.owner.utf8.count == 249)
        #expect(Self.nielsenTag(.v2_4).count == 271)
    }

    @Test(arguments: [ID3Tag.Version.v2_3, .v2_4])
    func wholeAndCutPacketsDecodeAlike(version: ID3Tag.Version) throws {
        let whole = Self.nielsenTag(version)
        let cut = Array(whole.dropFirst(5))
        #expect(cut.first == 0x20, "a cut packet starts at the flags byte")
        for packet in [whole, cut] {
            let contents = ID3PacketParser.parse(packet)
            let tag = try #require(contents.tags.first)
            #expect(contents.error == nil)
            #expect(tag.version == version)
            #expect(tag.privFrames.map(\.owner) == [Self.owner])
        }
        #expect(ID3PacketParser.parse(whole).tags[0].notes.isEmpty)
        #expect(ID3PacketParser.parse(cut).tags[0].notes.first?.hasPrefix("header restored") == true)
    }

    @Test func onlyTheFirstOfBackToBackTagsIsCut() throws {
        let packet = Self.nielsenTag(.v2_3) + ID3TagSpec(version: .v2_4, frames: [.txxx(description: "d", value: "v")]).bytes()
        let contents = ID3PacketParser.parse(Array(packet.dropFirst(5)))
        #expect(contents.error == nil)
        #expect(contents.tags.map(\.version) == [.v2_3, .v2_4])
    }

    @Test func bytesThatOnlyLookCutAreRejected() {
        // Flags byte fine, size sync-safe, but no frame chain fits any version.
        let contents = ID3PacketParser.parse([0x00, 0, 0, 0, 6] + Array("ab!def".utf8))
        #expect(contents.tags.isEmpty)
        #expect(contents.error != nil)
        #expect(!CutHeaderRepair.looksCut([0x0F, 0, 0, 0, 1, 0]), "low flag bits are never set")
        #expect(!CutHeaderRepair.looksCut([0x00, 0, 0, 0, 99, 0]), "size larger than the packet")
    }
}
