import Testing
@testable import ID3Meter
@testable import ID3MeterCore

@Suite("Nielsen tags")
struct NielsenTagTests {
    // The two tags from Nielsen's documentation (docs/DTVR.md describes their shape): an INFO tag (both CIDs
    // null, both offsets 0) and a DATA tag whose PC CID is still the placeholder.
    static let infoSample = "www.nielsen.com/X100zdCIGeIlgZnkYj6UvQ==/X100zdCIGeIlgZnkYj6UvQ==/AAAB2Jz2_k74GXSzx4npHuI_JwJd3QSUpW30rDkGTcbHEzIMWleCzM-uvNOP9fzJcQMWQLJqzXMCAxParOb5sGijSV9dNM3QiBniJYGZ5GI-lL1fXTTN0IgZ4iWBmeRiPpS9AAAAAAAAAAAAAAAAAAAAAFJWFM5SVhTONNU=/00000/00000/00"
    static let sample = CutHeaderRepairTests.owner

    @Test func documentedSamplesAreValid() throws {
        let tag = try #require(NielsenTag(owner: Self.sample))
        #expect(tag.isValid)
        #expect(tag.issues == [])
        #expect(tag.pcCID == "X100zdCIGeIlgZnkYj6UvQ==")
        #expect(tag.fdCID == "R8WHe7pEBeqBhu8jTeXydg==")
        #expect(tag.watermarkData?.count == 168)
        #expect(tag.pcOffset == "00000")
        #expect(tag.fdOffset == "46016")
        #expect(tag.breakout == "00")
        #expect(tag.payload == Self.sample)
        #expect(tag.kind == .data && tag.hasPlaceholderPCCID && !tag.hasOffsetOnNullCID && !tag.isCreditable)
        let info = try #require(NielsenTag(owner: Self.infoSample))
        #expect(info.isValid)
        #expect(info.kind == .info)
        #expect(!info.hasPlaceholderPCCID, "an INFO tag's null CIDs are what it is, not a placeholder")
    }

    /// INFO is both CIDs null and both offsets 0; anything short of that is a DATA tag, and a
    /// null CID beside a non-zero offset is the Validator's -55.
    @Test func dataAndInfoTagsAreToldApartByTheirVisibleFields() throws {
        func tag(pc: String, fd: String, pcOffset: String, fdOffset: String) throws -> NielsenTag {
            var fields = Self.sample.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            (fields[1], fields[2], fields[4], fields[5]) = (pc, fd, pcOffset, fdOffset)
            return try #require(NielsenTag(owner: fields.joined(separator: "/")))
        }
        let null = "X100zdCIGeIlgZnkYj6UvQ==", real = "R8WHe7pEBeqBhu8jTeXydg=="
        let info = try tag(pc: null, fd: null, pcOffset: "00000", fdOffset: "00000")
        #expect(info.kind == .info && !info.hasOffsetOnNullCID && !info.isCreditable)
        let nullOffset = try tag(pc: null, fd: null, pcOffset: "00000", fdOffset: "00012")
        #expect(nullOffset.kind == .data && nullOffset.hasOffsetOnNullCID && nullOffset.hasPlaceholderPCCID)
        let placeholder = try tag(pc: null, fd: real, pcOffset: "36002", fdOffset: "36002")
        #expect(placeholder.kind == .data && placeholder.hasPlaceholderPCCID && placeholder.hasOffsetOnNullCID)
        let fdNull = try tag(pc: real, fd: null, pcOffset: "36002", fdOffset: "00000")
        #expect(fdNull.kind == .data && !fdNull.hasPlaceholderPCCID && !fdNull.hasOffsetOnNullCID && fdNull.isCreditable)
        let data = try tag(pc: real, fd: real, pcOffset: "36002", fdOffset: "36002")
        #expect(data.kind == .data && data.isCreditable)
    }

    @Test func otherOwnersAreNotNielsenTags() {
        #expect(NielsenTag(owner: "com.apple.streaming.transportStreamTimestamp") == nil)
        #expect(NielsenTag(owner: "nielsen.com/x") == nil)
    }

    @Test func eachShapeRuleIsReported() {
        func issues(_ transform: (inout [String]) -> Void) -> [NielsenIssue] {
            var fields = Self.sample.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            transform(&fields)
            return NielsenTag(owner: fields.joined(separator: "/"))?.issues ?? []
        }
        #expect(issues { $0[1] = "X100zdCIGeIlgZnkYj6Uv!==" } == [.pcCID])
        #expect(issues { $0[2] = "R8WHe7pEBeqBhu8jTeXyd=A=" } == [.fdCID])
        #expect(issues { $0[3] = String($0[3].dropLast(2)) + "=A" } == [.payload])
        #expect(issues { $0[4] = "0000a" } == [.pcOffset])
        #expect(issues { $0[5] = "4601" + "x" } == [.fdOffset])
        #expect(issues { $0[6] = "01" } == [.breakout("01")])
        #expect(issues { $0[3] = String($0[3].dropLast()) } == [.length(248), .payload])
        #expect(issues { $0.removeLast() } == [.length(246), .fieldCount(5)])
        #expect(NielsenTag(owner: "www.nielsen.com")?.issues == [.length(15), .fieldCount(0)])
    }

    @Test func anInvalidTagIsKeptWithItsPayload() throws {
        let tag = try #require(NielsenTag(owner: "www.nielsen.com/garbage"))
        #expect(!tag.isValid)
        #expect(tag.payload == "www.nielsen.com/garbage")
        #expect(tag.issues.map(\.code) == ["length", "field_count"])
    }

    /// The fields are cut byte-wise for speed; the standard library's split of the same owner is
    /// the reference, over owners with empty fields, stray slashes and non-ASCII text.
    @Test func fieldsAreWhatTheStandardSplitGives() {
        var random = SystemRandomNumberGenerator()
        let pieces = ["/", "//", "A", "9", "=", "-", "é", "🎵", "00", "X100zdCIGeIlgZnkYj6UvQ=="]
        for _ in 0..<2_000 {
            let owner = NielsenTag.ownerPrefix + (0..<Int.random(in: 0...12, using: &random))
                .map { _ in pieces.randomElement(using: &random)! }.joined()
            let tag = NielsenTag(owner: owner)!
            let expected = owner.dropFirst(NielsenTag.ownerPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
                .dropFirst().map(String.init)
            func field(_ index: Int) -> String? { index < expected.count ? expected[index] : nil }
            #expect([tag.pcCID, tag.fdCID, tag.watermarkData, tag.pcOffset, tag.fdOffset, tag.breakout] == (0..<6).map(field), "\(owner)")
            #expect(tag.issues.contains(.fieldCount(expected.count)) == (expected.count != 6), "\(owner)")
        }
    }

    /// Every ASCII character in a PC CID and in a payload, judged against the two alphabets of
    /// RFC 4648 (§4 standard, §5 URL-safe), both of which occur.
    @Test func eachCharacterIsJudgedByTheBase64Alphabets() {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_".utf8)
        var fields = Self.sample.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let cid = fields[1], payload = fields[3]
        for byte in UInt8(0)..<0x80 where byte != UInt8(ascii: "/") && byte != UInt8(ascii: "=") {
            let character = String(UnicodeScalar(byte))
            fields[1] = String(cid.prefix(5)) + character + String(cid.dropFirst(6))
            fields[3] = String(payload.prefix(100)) + character + String(payload.dropFirst(101))
            let issues = NielsenTag(owner: fields.joined(separator: "/"))?.issues
            let expected: [NielsenIssue] = alphabet.contains(byte) ? [] : [.pcCID, .payload]
            #expect(issues == expected, "\(byte)")
        }
    }

    /// Padding: at most two '=' and only at the end of a base64 field.
    @Test func paddingIsTwoEqualsSignsAtMostAndOnlyAtTheEnd() {
        var fields = Self.sample.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let cid = fields[1].filter { $0 != "=" }
        for (text, valid) in [(cid + "==", true), (String(cid.dropLast()) + "===", false), (String(cid.prefix(10)) + "=" + cid.dropFirst(10) + "=", false),
                              (cid + "A=", true), ("=" + cid + "=", false), (cid + "AA", true)] {
            fields[1] = text
            let issues = NielsenTag(owner: fields.joined(separator: "/"))?.issues ?? []
            #expect(issues.contains(.pcCID) == !valid, "\(text)")
        }
    }
}
