import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

@Suite("ID3v2 tags")
struct ID3TagParserTests {
    let owner = "www.nielsen.com/example"

    private func onlyTag(_ bytes: [UInt8]) throws -> ID3Tag {
        let contents = ID3PacketParser.parse(bytes)
        #expect(contents.error == nil, "\(String(describing: contents.error))")
        #expect(contents.tags.count == 1)
        return try #require(contents.tags.first)
    }

    @Test func v22TextAndUserTextFrames() throws {
        let body = ID3Bytes.v22Frame("TT2", [0] + Array("Title".utf8)) + ID3Bytes.v22Frame("TXX", [0] + Array("key\u{0}value".utf8))
        let tag = try onlyTag(ID3Bytes.tag(version: 2, body: body))
        #expect(tag.version == .v2_2)
        #expect(tag.frames.map(\.id) == ["TT2", "TXX"])
        #expect(tag.frames[0].content == .text(["Title"]))
        #expect(tag.frames[1].content == .userText(description: "key", value: "value"))
    }

    @Test func v23PlainFrameSizes() throws {
        let data = Array(owner.utf8) + [0] + [UInt8](repeating: 7, count: 200)
        let tag = try onlyTag(ID3Bytes.tag(version: 3, body: ID3Bytes.v23Frame("PRIV", data)))
        #expect(tag.version == .v2_3)
        #expect(tag.frames == [ID3Frame(id: "PRIV", size: 224, content: .priv(owner: owner, data: [UInt8](repeating: 7, count: 200)))])
    }

    @Test func v24SyncSafeFrameSizes() throws {
        let data = Array(owner.utf8) + [0] + [UInt8](repeating: 1, count: 300)
        let tag = try onlyTag(ID3Bytes.tag(version: 4, body: ID3Bytes.v24Frame("PRIV", data)))
        #expect(tag.frames.first?.size == 324)
        #expect(tag.privFrames.first?.owner == owner)
        #expect(tag.notes.isEmpty)
    }

    @Test func v24WrittenWithPlainSizesIsTolerated() throws {
        // 200 written plainly is 0x000000C8: not sync-safe, so only the plain reading fits.
        let data = Array(owner.utf8) + [0] + [UInt8](repeating: 1, count: 176)
        let tag = try onlyTag(ID3Bytes.tag(version: 4, body: ID3Bytes.v23Frame("PRIV", data) + ID3Bytes.v23Frame("TIT2", [3] + Array("ok".utf8))))
        #expect(tag.version == .v2_4)
        #expect(tag.privFrames.first?.owner == owner)
        #expect(tag.frames.last?.content == .text(["ok"]))
        #expect(tag.notes == ["ID3v2.4 tag written with plain (not sync-safe) frame sizes"])
    }

    @Test func v23TagLevelUnsynchronisation() throws {
        let privateData: [UInt8] = [0xFF, 0xFB, 0x00, 0xFF, 0x00, 0xFF]
        let frames = ID3Bytes.v23Frame("PRIV", Array(owner.utf8) + [0] + privateData)
        // The writer inserts a zero after each 0xFF followed by 0xE0+ or 0x00, and after a final 0xFF.
        let unsynchronised = frames.prefix(frames.count - privateData.count) + [0xFF, 0x00, 0xFB, 0x00, 0xFF, 0x00, 0x00, 0xFF, 0x00]
        let tag = try onlyTag(ID3Bytes.tag(version: 3, flags: 0x80, body: Array(unsynchronised)))
        #expect(tag.privFrames.first?.data == privateData)
    }

    @Test func v24PerFrameUnsynchronisationWithDataLengthIndicator() throws {
        let privateData: [UInt8] = [0xFF, 0xE2, 0x10]
        let stored = ID3Bytes.syncSafe(owner.utf8.count + 1 + 3) + Array(owner.utf8) + [0, 0xFF, 0x00, 0xE2, 0x10]
        let tag = try onlyTag(ID3Bytes.tag(version: 4, flags: 0x80, body: ID3Bytes.v24Frame("PRIV", flags: 0x03, stored)))
        #expect(tag.privFrames.first?.owner == owner)
        #expect(tag.privFrames.first?.data == privateData)
    }

    @Test(arguments: [ID3Tag.Version.v2_3, .v2_4])
    func extendedHeaderFooterAndPadding(version: ID3Tag.Version) throws {
        let spec = ID3TagSpec(version: version, frames: [.priv(owner: owner, data: [0x41])],
                              extendedHeader: true, footer: version == .v2_4, padding: 40)
        let bytes = spec.bytes()
        let tag = try onlyTag(bytes)
        #expect(tag.byteCount == bytes.count)
        #expect(tag.privFrames.map(\.owner) == [owner])
    }

    @Test func tagsBackToBackInOnePacketThenPadding() {
        let first = ID3Bytes.tag(version: 4, body: ID3Bytes.v24Frame("PRIV", Array("a.example".utf8) + [0, 1]))
        let second = ID3Bytes.tag(version: 3, body: ID3Bytes.v23Frame("TXXX", [0] + Array("d\u{0}v".utf8)))
        let contents = ID3PacketParser.parse(first + second + [0, 0, 0, 0])
        #expect(contents.error == nil)
        #expect(contents.tags.map(\.version) == [.v2_4, .v2_3])
        #expect(contents.tags.map(\.byteCount) == [first.count, second.count])
    }

    @Test func compressedAndEncryptedFramesAreSkippedAndNoted() throws {
        let v23 = try onlyTag(ID3Bytes.tag(version: 3, body: ID3Bytes.v23Frame("PRIV", flags: 0x80, [0, 0, 0, 9, 1, 2, 3])))
        #expect(v23.frames.first?.content == .skipped(reason: "compressed"))
        #expect(v23.notes == [], "the note is the frame's, on its own record")
        let record = try #require(TagRecord.all(for: .tag(TimedTag(tag: v23, pts: 0, origin: TagOrigin(source: "x"))), allFrames: true).first)
        #expect(record.reason == "compressed" && record.owner == nil)
        #expect(record.notes == ["frame PRIV compressed, not decoded"])
        let v24 = try onlyTag(ID3Bytes.tag(version: 4, body: ID3Bytes.v24Frame("PRIV", flags: 0x04, [1, 2])))
        #expect(v24.frames.first?.content == .skipped(reason: "encrypted"))
    }

    @Test func textEncodings() throws {
        let utf16BOM: [UInt8] = [1, 0xFF, 0xFE, 0x68, 0x00, 0xE9, 0x00, 0, 0]
        let utf16BE: [UInt8] = [2, 0x00, 0x68, 0x00, 0xE9]
        let utf8: [UInt8] = [3] + Array("hé".utf8) + [0] + Array("second".utf8)
        let latin1: [UInt8] = [0, 0x68, 0xE9]
        let body = [utf16BOM, utf16BE, utf8, latin1].enumerated().flatMap { ID3Bytes.v24Frame("TIT\($0.offset)", $0.element) }
        let tag = try onlyTag(ID3Bytes.tag(version: 4, body: body))
        #expect(tag.frames.map(\.content) == [.text(["hé"]), .text(["hé"]), .text(["hé", "second"]), .text(["hé"])])
    }

    @Test func malformedTagsAreValuesWithReasons() {
        let good = ID3Bytes.tag(version: 4, body: ID3Bytes.v24Frame("PRIV", Array(owner.utf8) + [0]))
        let cases: [([UInt8], ID3ParseError.Reason)] = [
            (Array(good.dropLast(4)), .truncated(declared: good.count, present: good.count - 4)),
            ([0x49, 0x44, 0x33, 5, 0, 0, 0, 0, 0, 10] + [UInt8](repeating: 0, count: 10), .unsupportedVersion(5)),
            ([0x49, 0x44, 0x33, 4, 0, 0, 0x80, 0, 0, 10], .headerTruncatedOrSizeNotSyncSafe),
            (ID3Bytes.tag(version: 4, body: Array("pr!v".utf8) + [0, 0, 0, 1, 0, 0, 1]), .invalidFrameID(version: .v2_4)),
            (ID3Bytes.tag(version: 3, body: ID3Bytes.plain(0x50524956) + ID3Bytes.plain(500) + [0, 0, 1]), .frameOverruns("PRIV")),
            (Array("hello world".utf8), .packetDoesNotStartWithTag),
        ]
        for (bytes, reason) in cases {
            let contents = ID3PacketParser.parse(bytes)
            #expect(contents.tags.isEmpty)
            #expect(contents.error?.reason == reason, "\(String(describing: contents.error)) should be \(reason)")
        }
    }

    @Test func everyTruncationAndRandomBytesStayInBounds() {
        var random = SeededRandom(seed: 99)
        let tags = [
            ID3TagSpec(version: .v2_4, frames: [.priv(owner: owner, data: [0xFF, 0xE0])], unsynchronised: true, extendedHeader: true, footer: true),
            ID3TagSpec(version: .v2_3, frames: [.txxx(description: "a", value: "b"), .priv(owner: owner, data: [1])], unsynchronised: true),
        ].map { $0.bytes() }
        for tag in tags {
            for length in 0...tag.count {
                let prefix = Array(tag.prefix(length))
                _ = ID3PacketParser.parse(prefix)
                _ = ID3PacketParser.parse(Array(prefix.dropFirst(min(5, prefix.count))))
            }
        }
        for _ in 0..<2_000 {
            var bytes = random.bytes(Int.random(in: 0...64, using: &random))
            if Bool.random(using: &random) { bytes = [0x49, 0x44, 0x33, UInt8.random(in: 2...4, using: &random)] + bytes }
            let contents = ID3PacketParser.parse(bytes)
            #expect(contents.tags.allSatisfy { $0.byteCount <= bytes.count + CutHeaderRepair.cutLength })
        }
    }

    /// ISO-8859-1 maps byte n to U+00n: a byte over 0x7F anywhere in an owner (it is looked for
    /// eight bytes at a time) makes that character, and plain ASCII stays as it is.
    @Test func aLatin1ByteAnywhereInAnOwnerIsItsCharacter() throws {
        for length in [1, 7, 8, 9, 16, 17, 30] {
            for position in 0..<length {
                var bytes = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
                bytes[position] = 0xE9
                let tag = try onlyTag(ID3Bytes.tag(version: 4, body: ID3Bytes.v24Frame("PRIV", bytes + [0, 1])))
                let expected = String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
                #expect(tag.frames.first?.content == .priv(owner: expected, data: [1]), "\(length) \(position)")
            }
        }
    }
}
