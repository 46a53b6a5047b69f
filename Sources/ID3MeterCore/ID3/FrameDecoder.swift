/// Turns a located frame into an `ID3Frame`, undoing the per-frame flags first.
enum FrameDecoder {
    /// `tagUnsynchronised` is the v2.4 header flag, which applies to every frame.
    static func decode(_ raw: RawFrame, in body: [UInt8], version: ID3Tag.Version,
                       tagUnsynchronised: Bool) -> ID3Frame {
        var reader = ByteReader(body, from: raw.data.lowerBound, to: raw.data.upperBound)
        let size = raw.data.count
        let format = UInt8(raw.flags & 0xFF)
        var unsynchronised = false
        switch version {
        case .v2_2:
            break
        case .v2_3:
            // ID3v2.3 §3.3.1: compression (4-byte size), encryption (method), grouping (id).
            if format & 0x80 != 0 { return skipped(raw, size, "compressed") }
            if format & 0x40 != 0 { return skipped(raw, size, "encrypted") }
            if format & 0x20 != 0, !reader.skip(1) { return malformed(raw, size) }
        case .v2_4:
            // ID3v2.4 §4.1.2: grouping id, encryption method, data length indicator, in that order.
            if format & 0x08 != 0 { return skipped(raw, size, "compressed") }
            if format & 0x04 != 0 { return skipped(raw, size, "encrypted") }
            if format & 0x40 != 0, !reader.skip(1) { return malformed(raw, size) }
            if format & 0x01 != 0, !reader.skip(4) { return malformed(raw, size) }
            unsynchronised = format & 0x02 != 0 || tagUnsynchronised
        }
        let data = unsynchronised ? ArraySlice(removeUnsynchronisation(reader.rest())) : reader.rest()
        return ID3Frame(id: raw.id, size: size, content: content(id: raw.id, data: data))
    }

    private static func content(id: String, data: ArraySlice<UInt8>) -> ID3Frame.Content {
        switch id {
        case "PRIV":
            let terminator = data.withUnsafeBufferPointer { $0.firstIndex(of: 0) }.map { data.startIndex + $0 } ?? data.endIndex
            let owner = ID3Text.latin1(data[data.startIndex..<terminator])
            let privateData = terminator < data.endIndex ? Array(data[(terminator + 1)...]) : []
            return .priv(owner: owner, data: privateData)
        case "TXXX", "TXX":
            guard let encoding = data.first else { return .userText(description: "", value: "") }
            let strings = ID3Text.strings(data.dropFirst(), encoding: encoding)
            return .userText(description: strings.first ?? "", value: strings.dropFirst().joined(separator: "\0"))
        case _ where id.hasPrefix("T"):
            guard let encoding = data.first else { return .text([]) }
            return .text(ID3Text.strings(data.dropFirst(), encoding: encoding))
        default:
            return .other
        }
    }

    private static func skipped(_ raw: RawFrame, _ size: Int, _ reason: String) -> ID3Frame {
        ID3Frame(id: raw.id, size: size, content: .skipped(reason: reason))
    }

    private static func malformed(_ raw: RawFrame, _ size: Int) -> ID3Frame {
        ID3Frame(id: raw.id, size: size, content: .skipped(reason: "frame shorter than its flags require"))
    }
}
