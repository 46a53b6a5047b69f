/// Hand-built ID3 pieces for the cases the sample writer does not produce.
enum ID3Bytes {
    static func header(version: UInt8, flags: UInt8 = 0, size: Int) -> [UInt8] {
        [0x49, 0x44, 0x33, version, 0, flags] + syncSafe(size)
    }

    static func syncSafe(_ value: Int) -> [UInt8] { [21, 14, 7, 0].map { UInt8((value >> $0) & 0x7F) } }

    static func plain(_ value: Int, bytes: Int = 4) -> [UInt8] {
        (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    /// A v2.2 frame: 3-character id, 24-bit size, no flags.
    static func v22Frame(_ id: String, _ data: [UInt8]) -> [UInt8] { Array(id.utf8) + plain(data.count, bytes: 3) + data }

    static func v23Frame(_ id: String, flags: UInt8 = 0, _ data: [UInt8]) -> [UInt8] {
        Array(id.utf8) + plain(data.count) + [0, flags] + data
    }

    static func v24Frame(_ id: String, flags: UInt8 = 0, _ data: [UInt8]) -> [UInt8] {
        Array(id.utf8) + syncSafe(data.count) + [0, flags] + data
    }

    static func tag(version: UInt8, flags: UInt8 = 0, body: [UInt8]) -> [UInt8] {
        header(version: version, flags: flags, size: body.count) + body
    }
}
