import Foundation
import Testing
@testable import ID3MeterCore

/// `tag_id`: the same for the same tag whichever variant it was read from, different for
/// different tags, and what Python's hashlib makes of the payload (an independent writer of
/// SHA-256), so that a backend can compute it itself.
@Suite("A tag's identity", .timeLimit(.minutes(2)))
struct TagIdentityTests {
    /// FIPS 180-4's examples, and a message that fills a block's padding exactly.
    @Test func sha256GivesTheStandardsDigests() {
        let hex = { (bytes: [UInt8]) in bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
        #expect(hex(SHA256.digest(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA256.digest([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(SHA256.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(hex(SHA256.digest([UInt8](repeating: 0x61, count: 1_000_000)))
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Every length across the padding's edges (55, 56, 63, 64 bytes and the second block's),
    /// contiguous or not, against Python's hashlib.
    @Test func sha256AgreesWithHashlibAtEveryPaddingEdge() throws {
        let script = "import hashlib\nfor n in range(200): print(hashlib.sha256(bytes((i * 7 + 3) % 256 for i in range(n))).hexdigest())"
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = ["-c", script]
        let output = Pipe()
        python.standardOutput = output
        try python.run()
        let expected = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").map(String.init)
        python.waitUntilExit()
        #expect(expected.count == 200)
        let hex = { (bytes: [UInt8]) in bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
        for (length, digest) in expected.enumerated() {
            let lazy = (0..<length).lazy.map { UInt8(($0 * 7 + 3) % 256) }
            #expect(hex(SHA256.digest(Array(lazy))) == digest, "\(length) bytes")
            #expect(hex(SHA256.digest(lazy)) == digest, "\(length) bytes, not contiguous")
            #expect(TagIdentity.of(utf8: Array(lazy)) == String(digest.prefix(32)))
        }
    }

    /// The two variants of the HLS sample carry the same tags (one of them encrypted): their
    /// records give each tag one id, every tag a different one, each what hashlib gives.
    @Test func theSameTagHasOneIDInEveryVariant() throws {
        func ids(_ playlist: String) throws -> [String: String] {
            let result = try Command.run(["scan", "--format", "jsonl", Samples.path(playlist)])
            #expect(result.status == 0, "\(result.stderr)")
            let records = result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.filter { $0["type"] as? String == "nielsen" }
            return Dictionary(records.compactMap { record in
                (record["payload"] as? String).map { ($0, record["tag_id"] as? String ?? "") }
            }, uniquingKeysWith: { first, _ in first })
        }
        let low = try ids("hls/low/low.m3u8"), high = try ids("hls/high/high.m3u8")
        let planted = try Samples.expected("hls/expected.jsonl").filter(\.nielsen).compactMap(\.owner)
        #expect(planted.count >= 4 && Set(low.keys) == Set(planted) && Set(high.keys) == Set(planted))
        #expect(low == high, "one id for a tag whichever variant it was read from")
        #expect(Set(low.values).count == planted.count, "a different id for each tag")
        let script = "import hashlib, sys\nfor payload in sys.argv[1:]: print(hashlib.sha256(payload.encode()).hexdigest()[:32])"
        let python = try Command.run(["python3", "-c", script] + planted, binary: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(python.stdout.split(separator: "\n").map(String.init) == planted.map { low[$0] ?? "" })
    }
}
