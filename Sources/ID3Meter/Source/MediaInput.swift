import CID3MeterShim

/// A libavformat demuxer reduced to what metering needs: the streams it found and the
/// timed-ID3 packets, in file order. Every other stream is discarded inside libavformat.
///
/// Blocking and not thread-safe: Sendable only so that a `BlockingExecutor`, which runs one
/// call at a time off the cooperative pool, can own it.
public final class MediaInput: @unchecked Sendable {
    public struct Stream: Sendable, Equatable {
        public var index: Int
        public var isVideo: Bool
        public var isTimedID3: Bool
        /// The declared average frame rate, when known.
        public var frameRate: FrameRate?
    }

    public struct FrameRate: Sendable, Equatable {
        public var numerator: Int
        public var denominator: Int

        public var framesPerSecond: Double { Double(numerator) / Double(denominator) }
    }

    private var input: OpaquePointer?
    private let interrupt: Interrupt

    /// Opens a path or any URL libavformat reads (file, http, https, udp, srt). A local
    /// MPEG-TS file is opened as such without probing. `probeStreams` fills in frame rates
    /// at the cost of reading ahead.
    public init(url: String, interrupt: Interrupt = Interrupt(), ioTimeout: Double = 10,
                probeStreams: Bool = false) throws(AVError) {
        self.interrupt = interrupt
        try AVError.check(idm_input_open_url(&input, url, TransportStreamSync.formatName(ofFileAt: url), interrupt.pointer,
                                             Int64(ioTimeout * 1_000_000), probeStreams ? 1 : 0))
    }

    /// Opens bytes already in memory, such as one HLS segment.
    public init(bytes: [UInt8], format: String? = nil, interrupt: Interrupt = Interrupt(),
                probeStreams: Bool = false) throws(AVError) {
        self.interrupt = interrupt
        try AVError.check(idm_input_open_memory(&input, bytes, bytes.count, format, interrupt.pointer, probeStreams ? 1 : 0))
    }

    /// Opens `length` bytes of the MPEG-TS file at `path` from `offset`, demuxed after `prefix`
    /// (the file's first bytes, carrying its PAT and PMT). Packet positions are file offsets;
    /// packets from the prefix have none.
    public init(path: String, offset: Int64, length: Int64, prefix: [UInt8], interrupt: Interrupt = Interrupt()) throws(AVError) {
        self.interrupt = interrupt
        try AVError.check(idm_input_open_file_range(&input, path, offset, length, prefix, prefix.count, "mpegts", interrupt.pointer))
    }

    deinit { idm_input_close(&input) }

    /// Bytes of the input consumed so far.
    public var position: Int64 { idm_input_position(input) }

    public var streams: [Stream] {
        (0..<idm_input_stream_count(input)).map { index in
            let info = idm_input_stream_info(input, index)
            return Stream(index: Int(info.index), isVideo: info.media_type == 0 /* AVMEDIA_TYPE_VIDEO */,
                          isTimedID3: info.is_timed_id3 != 0,
                          frameRate: info.frame_rate_num > 0
                              ? FrameRate(numerator: Int(info.frame_rate_num), denominator: Int(info.frame_rate_den)) : nil)
        }
    }

    /// The next timed-ID3 packet, or `nil` at the end of the input.
    public func nextPacket() throws(AVError) -> TimedID3Packet? {
        var packet = idm_packet()
        let result = idm_input_read_timed_id3(input, &packet)
        if result < 0 {
            let error = AVError(code: result)
            if error.isEndOfFile { return nil }
            throw error
        }
        let bytes = packet.size > 0 && packet.data != nil
            ? [UInt8](UnsafeBufferPointer(start: packet.data, count: Int(packet.size))) : []
        return TimedID3Packet(bytes: bytes, pts: ticks90k(packet.pts, packet.time_base_num, packet.time_base_den),
                              dts: ticks90k(packet.dts, packet.time_base_num, packet.time_base_den),
                              streamIndex: Int(packet.stream_index), position: packet.position >= 0 ? packet.position : nil)
    }

    private func ticks90k(_ value: Int64, _ num: Int32, _ den: Int32) -> Int64? {
        guard value != Int64.min, num > 0, den > 0 else { return nil }
        let ticks = num == 1 && den == Int32(PTS.clockRate) ? value : value * Int64(num) * PTS.clockRate / Int64(den)
        return PTS.asCarried(ticks)
    }
}
