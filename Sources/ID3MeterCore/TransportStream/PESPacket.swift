/// One PES packet of a timed-ID3 PID, gathered from its TS packets (ISO/IEC 13818-1 §2.4.3.6).
struct PESPacket: Equatable {
    var bytes: [UInt8]
    /// File offset of the TS packet the PES started in.
    var position: Int64
    /// The caller's label for the bytes it started in (an HLS segment).
    var unit: Int

    /// PES_packet_length: the bytes after the length field, when the packet declares it.
    var declaredLength: Int? {
        guard bytes.count >= 6 else { return nil }
        let length = Int(bytes[4]) << 8 | Int(bytes[5])
        return length == 0 ? nil : 6 + length
    }

    var isComplete: Bool { declaredLength.map { bytes.count >= $0 } ?? false }

    /// The payload and PTS, or why the header does not parse. With `acceptingCut`, a PES shorter
    /// than it declares (the input ended) gives the payload bytes there are.
    func parsed(acceptingCut: Bool = false) -> Result<(payload: ArraySlice<UInt8>, pts: Int64?), PESError> {
        guard bytes.count >= 6, bytes[0] == 0, bytes[1] == 0, bytes[2] == 1 else {
            return .failure(PESError(reason: "PES does not start with a start code"))
        }
        let end = declaredLength.map { min($0, bytes.count) } ?? bytes.count
        if let declared = declaredLength, bytes.count < declared, !acceptingCut {
            return .failure(PESError(reason: "PES cut short: \(bytes.count) of \(declared) bytes"))
        }
        // Streams without the optional header (§2.4.3.7: padding, private_stream_2, ECM, ...).
        if [0xBC, 0xBE, 0xBF, 0xF0, 0xF1, 0xF2, 0xF8, 0xFF].contains(bytes[3]) { return .success((bytes[6..<end], nil)) }
        guard end >= 9, bytes[6] & 0xC0 == 0x80 else { return .failure(PESError(reason: "PES header is malformed")) }
        let payloadStart = 9 + Int(bytes[8])
        guard payloadStart <= end else { return .failure(PESError(reason: "PES header is longer than the packet")) }
        return .success((bytes[payloadStart..<end], PTS.inPESHeader(bytes[..<end])))
    }
}

struct PESError: Error {
    var reason: String
}
