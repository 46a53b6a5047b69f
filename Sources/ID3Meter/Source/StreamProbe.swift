import CID3MeterShim

/// What libavformat makes of the opening bytes of a stream: its elementary streams and their
/// declared frame rates, which the frame clock runs at.
package enum StreamProbe {
    /// One elementary stream of the probed bytes.
    public struct Stream: Sendable, Equatable {
        public var index: Int
        public var isVideo: Bool
        public var isTimedID3: Bool
        /// The declared average frame rate, when known.
        public var frameRate: FrameRate?
    }

    /// A rational frame rate as the container declares it (30000/1001, not 29.97).
    public struct FrameRate: Sendable, Equatable {
        public var numerator: Int
        public var denominator: Int

        public var framesPerSecond: Double { Double(numerator) / Double(denominator) }
    }

    /// Enough of a stream to find its video's frame rate.
    public static let prefixBytes = 512 << 10

    /// The streams libavformat finds in `bytes` (at most `prefixBytes` are needed), MPEG-TS or
    /// anything else it recognises; throws what libavformat said when it recognises nothing.
    public static func streams(in bytes: [UInt8], interrupt: Interrupt = Interrupt()) throws(AVError) -> [Stream] {
        var input: OpaquePointer?
        let format = TransportStreamSync.offset(in: bytes) == 0 ? "mpegts" : nil
        try AVError.check(idm_input_probe_memory(&input, bytes, bytes.count, format, interrupt.pointer))
        defer { idm_input_close(&input) }
        return (0..<idm_input_stream_count(input)).map { index in
            let info = idm_input_stream_info(input, index)
            return Stream(index: Int(info.index), isVideo: info.media_type == 0 /* AVMEDIA_TYPE_VIDEO */,
                          isTimedID3: info.is_timed_id3 != 0,
                          frameRate: info.frame_rate_num > 0
                              ? FrameRate(numerator: Int(info.frame_rate_num), denominator: Int(info.frame_rate_den)) : nil)
        }
    }
}
