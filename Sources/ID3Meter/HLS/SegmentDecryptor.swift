import CID3MeterShim

/// Undoes AES-128-CBC with PKCS#7 padding (RFC 8216 §5.2) as a segment's bytes arrive: whole
/// blocks are decrypted at once, the last one is held until the end, where its padding goes.
struct SegmentDecryptor {
    private static let block = 16
    private let key: [UInt8]
    private var iv: [UInt8]
    private var held: [UInt8] = []
    private var total = 0

    init(key: [UInt8], iv: [UInt8]) {
        self.key = key
        self.iv = iv
    }

    /// The plaintext that `bytes` complete, less the last block, which may be padding.
    mutating func decrypt(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        held.append(contentsOf: bytes)
        total += bytes.count
        let ready = (held.count - 1) / Self.block * Self.block
        guard ready > 0 else { return [] }
        var plain = Array(held[..<ready])
        held.removeFirst(ready)
        idm_aes128_cbc(&plain, plain.count, key, &iv, 1)
        return plain
    }

    /// The last block without its padding, or `nil` when the bytes do not decrypt to a padded whole.
    mutating func finish() -> [UInt8]? {
        guard total > 0, held.count == Self.block, idm_aes128_cbc(&held, held.count, key, &iv, 1) == 0,
              let padding = held.last, (1...16).contains(padding),
              held.suffix(Int(padding)).allSatisfy({ $0 == padding }) else { return nil }
        return Array(held.dropLast(Int(padding)))
    }
}
