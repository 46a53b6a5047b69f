/// The PSI tables that say where timed ID3 is: the PAT names each program's PMT PID, and a
/// PMT lists the program's elementary streams (ISO/IEC 13818-1 §2.4.4).
enum ProgramTables {
    /// A stream in a PMT, with what marks it as timed ID3.
    struct ElementaryStream: Equatable {
        var pid: Int
        var streamType: UInt8
        /// A metadata_descriptor (tag 0x26) or registration descriptor (tag 0x05) naming `ID3 `.
        var declaresID3: Bool
        /// A metadata_descriptor naming some other format (KLV, for one).
        var declaresOtherMetadata: Bool

        /// Apple's timed metadata uses stream_type 0x15 with a metadata descriptor; some
        /// muxers leave the descriptor out (libavformat 5.1 then makes no stream of it),
        /// others use private data (0x06) registered as `ID3 `.
        var isTimedID3: Bool {
            (streamType == 0x15 && !declaresOtherMetadata) || declaresID3
        }

        /// MPEG-1/2 audio, AAC (ADTS, LATM), AC-3 and E-AC-3 (ATSC), and their HLS SAMPLE-AES
        /// forms (whose PES headers, and so their PTS, stay in the clear).
        var isAudio: Bool { [0x03, 0x04, 0x0F, 0x11, 0x81, 0x87, 0xCF, 0xC1, 0xC2].contains(streamType) }
    }

    /// The programs of a PAT section with their PMT PIDs (program 0, the network PID, is not a PMT).
    static func programs(inPAT section: [UInt8]) -> [(program: Int, pmt: Int)] {
        guard let body = body(of: section, tableID: 0x00) else { return [] }
        return stride(from: body.lowerBound, to: body.upperBound - 3, by: 4).compactMap { entry in
            let program = Int(section[entry]) << 8 | Int(section[entry + 1])
            return program == 0 ? nil : (program, Int(section[entry + 2] & 0x1F) << 8 | Int(section[entry + 3]))
        }
    }

    /// The program_number a PMT section describes (its table_id_extension).
    static func program(ofPMT section: [UInt8]) -> Int? {
        guard body(of: section, tableID: 0x02) != nil else { return nil }
        return Int(section[3]) << 8 | Int(section[4])
    }

    static func streams(inPMT section: [UInt8]) -> [ElementaryStream] {
        guard let body = body(of: section, tableID: 0x02), body.count >= 4 else { return [] }
        let programInfoLength = Int(section[body.lowerBound + 2] & 0x0F) << 8 | Int(section[body.lowerBound + 3])
        var offset = body.lowerBound + 4 + programInfoLength
        var streams: [ElementaryStream] = []
        while offset + 5 <= body.upperBound {
            let infoLength = Int(section[offset + 3] & 0x0F) << 8 | Int(section[offset + 4])
            let descriptors = offset + 5..<min(offset + 5 + infoLength, body.upperBound)
            let formats = metadataFormats(section, in: descriptors)
            streams.append(ElementaryStream(
                pid: Int(section[offset + 1] & 0x1F) << 8 | Int(section[offset + 2]), streamType: section[offset],
                declaresID3: formats.contains(id3Format), declaresOtherMetadata: formats.contains { $0 != id3Format }))
            offset = descriptors.upperBound
        }
        return streams
    }

    private static let id3Format: [UInt8] = Array("ID3 ".utf8)

    /// Format identifiers of the metadata and registration descriptors in `range`.
    private static func metadataFormats(_ bytes: [UInt8], in range: Range<Int>) -> [[UInt8]] {
        var formats: [[UInt8]] = []
        var offset = range.lowerBound
        while offset + 2 <= range.upperBound {
            let tag = bytes[offset], length = Int(bytes[offset + 1])
            let content = offset + 2..<min(offset + 2 + length, range.upperBound)
            switch tag {
            case 0x05 where content.count >= 4:   // registration_descriptor: format_identifier
                formats.append(Array(bytes[content.lowerBound..<content.lowerBound + 4]))
            case 0x26 where content.count >= 7:   // metadata_descriptor: application format, then metadata format
                let format = content.lowerBound + 2 + (bytes[content.lowerBound] == 0xFF && bytes[content.lowerBound + 1] == 0xFF ? 4 : 0)
                if bytes[format] == 0xFF, format + 5 <= content.upperBound {
                    formats.append(Array(bytes[format + 1..<format + 5]))
                } else if format < content.upperBound {
                    formats.append([bytes[format]])
                }
            default: break
            }
            offset = content.upperBound
        }
        return formats
    }

    /// The bytes between a long-form section's header and its CRC, when the CRC checks out.
    private static func body(of section: [UInt8], tableID: UInt8) -> Range<Int>? {
        guard section.count >= 12, section[0] == tableID, section[1] & 0x80 != 0 else { return nil }
        let length = Int(section[1] & 0x0F) << 8 | Int(section[2])
        guard length >= 9, 3 + length <= section.count, crc32(section[0..<3 + length]) == 0 else { return nil }
        return 8..<3 + length - 4
    }

    /// CRC-32/MPEG-2 over a section including its CRC field: zero when intact.
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(UInt32.max) { crc, byte in crcTable[Int((crc >> 24) ^ UInt32(byte))] ^ (crc << 8) }
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index) << 24) { crc, _ in crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
    }
}
