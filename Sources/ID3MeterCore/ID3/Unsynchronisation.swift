/// Reverses ID3 unsynchronisation (ID3v2.3 §5, ID3v2.4 §6.1): the writer inserted a zero
/// after every 0xFF so no false MPEG sync appears; drop each zero that follows a 0xFF.
func removeUnsynchronisation<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
    var result: [UInt8] = []
    result.reserveCapacity(bytes.count)
    var previousWasFF = false
    for byte in bytes {
        if !(previousWasFF && byte == 0) { result.append(byte) }
        previousWasFF = byte == 0xFF
    }
    return result
}
