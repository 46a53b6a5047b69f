/// The header of one frame of a packed audio stream, enough to step to the next frame and to
/// count time: AAC in ADTS (ISO/IEC 13818-7), MPEG audio layers I-III (ISO/IEC 11172-3,
/// 13818-3), AC-3 and E-AC-3 (ATSC A/52).
struct AudioFrameHeader: Equatable {
    var length: Int
    var samples: Int
    var sampleRate: Int

    /// The frame starting at `offset`, when the bytes there are a frame header of a known kind.
    static func parse(_ bytes: [UInt8], at offset: Int) -> AudioFrameHeader? {
        var reader = ByteReader(bytes, from: offset)
        guard let head = reader.read(7).map(Array.init) ?? reader.read(reader.remaining).map(Array.init), head.count >= 4 else {
            return nil
        }
        if head[0] == 0x0B, head[1] == 0x77 { return dolby(head) }
        guard head[0] == 0xFF, head[1] & 0xE0 == 0xE0 else { return nil }
        return head[1] & 0xF6 == 0xF0 ? adts(head) : mpegAudio(head)
    }

    private static let adtsRates = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000, 7_350]

    /// ADTS: 12-bit sync, layer 00, frame length over bytes 3-5 (header included).
    private static func adts(_ head: [UInt8]) -> AudioFrameHeader? {
        guard head.count >= 7 else { return nil }
        let rateIndex = Int(head[2] >> 2 & 0x0F)
        let length = Int(head[3] & 0x03) << 11 | Int(head[4]) << 3 | Int(head[5] >> 5)
        guard rateIndex < adtsRates.count, length >= 7 else { return nil }
        return AudioFrameHeader(length: length, samples: 1_024 * (Int(head[6] & 0x03) + 1), sampleRate: adtsRates[rateIndex])
    }

    private static let mpegRates = [44_100, 48_000, 32_000]
    // Kbit/s by [MPEG-1 or not][layer 1, 2, 3][index]; index 0 (free format) and 15 are not walkable.
    private static let bitrates: [[[Int]]] = [
        [[0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
         [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
         [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]],
        [[0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
         [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
         [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]],
    ]

    /// MPEG audio: 11-bit sync, version, layer, bitrate and sample-rate indices, padding.
    private static func mpegAudio(_ head: [UInt8]) -> AudioFrameHeader? {
        let version = head[1] >> 3 & 0x03          // 0: MPEG-2.5, 2: MPEG-2, 3: MPEG-1
        let layerBits = head[1] >> 1 & 0x03        // 3: layer I, 2: layer II, 1: layer III
        let bitrateIndex = Int(head[2] >> 4), rateIndex = Int(head[2] >> 2 & 0x03)
        guard version != 1, layerBits != 0, bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3 else { return nil }
        let mpeg1 = version == 3
        let layer = 4 - Int(layerBits)
        let sampleRate = mpegRates[rateIndex] >> (mpeg1 ? 0 : version == 2 ? 1 : 2)
        let bitrate = bitrates[mpeg1 ? 0 : 1][layer - 1][bitrateIndex] * 1_000
        let padding = Int(head[2] >> 1 & 0x01)
        switch layer {
        case 1:
            return AudioFrameHeader(length: (12 * bitrate / sampleRate + padding) * 4, samples: 384, sampleRate: sampleRate)
        case 2:
            return AudioFrameHeader(length: 144 * bitrate / sampleRate + padding, samples: 1_152, sampleRate: sampleRate)
        default:
            let perFrame = mpeg1 ? 1_152 : 576
            return AudioFrameHeader(length: perFrame / 8 * bitrate / sampleRate + padding, samples: perFrame, sampleRate: sampleRate)
        }
    }

    private static let dolbyRates = [48_000, 44_100, 32_000]
    // AC-3 frame sizes in 16-bit words by frmsizecod / 2, for 48, 44.1 and 32 kHz (A/52 table 5.18);
    // at 44.1 kHz an odd frmsizecod adds one word.
    private static let ac3Words: [[Int]] = [
        [64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1_024, 1_152, 1_280],
        [69, 87, 104, 121, 139, 174, 208, 243, 278, 348, 417, 487, 557, 696, 835, 975, 1_114, 1_253, 1_393],
        [96, 120, 144, 168, 192, 240, 288, 336, 384, 480, 576, 672, 768, 960, 1_152, 1_344, 1_536, 1_728, 1_920],
    ]

    /// AC-3 (bsid <= 8) or E-AC-3 (bsid 11-16), told apart by the bitstream id in byte 5.
    private static func dolby(_ head: [UInt8]) -> AudioFrameHeader? {
        guard head.count >= 6 else { return nil }
        let bsid = head[5] >> 3
        if bsid <= 10 {
            let fscod = Int(head[4] >> 6), frmsizecod = Int(head[4] & 0x3F)
            guard fscod < 3, frmsizecod < 38 else { return nil }
            let words = ac3Words[fscod][frmsizecod / 2] + (fscod == 1 ? frmsizecod & 1 : 0)
            return AudioFrameHeader(length: words * 2, samples: 1_536, sampleRate: dolbyRates[fscod])
        }
        guard bsid <= 16 else { return nil }
        let words = (Int(head[2] & 0x07) << 8 | Int(head[3])) + 1
        let fscod = Int(head[4] >> 6)
        if fscod == 3 {
            let fscod2 = Int(head[4] >> 4 & 0x03)
            guard fscod2 < 3 else { return nil }
            return AudioFrameHeader(length: words * 2, samples: 1_536, sampleRate: dolbyRates[fscod2] / 2)
        }
        let blocks = [1, 2, 3, 6][Int(head[4] >> 4 & 0x03)]
        return AudioFrameHeader(length: words * 2, samples: 256 * blocks, sampleRate: dolbyRates[fscod])
    }
}
