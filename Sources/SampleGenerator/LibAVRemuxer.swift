import CLibAV

/// Muxes a base audio/video TS together with scheduled timed-ID3 packets through
/// libavformat's own MPEG-TS muxer, optionally cut into HLS segments at video keyframes.
public struct LibAVRemuxer {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public var basePath: String

    public init(basePath: String) { self.basePath = basePath }

    /// Writes `packets` into the base's timeline. With `segmentDuration`, a new file starts
    /// at the first video keyframe at or after each multiple of it; `path(i)` names file i.
    /// Returns each file's first PTS, in 90 kHz ticks.
    @discardableResult
    public func write(_ packets: [ScheduledPacket], segmentDuration: Double? = nil,
                      path: (Int) -> String) throws -> [Int64] {
        var input: UnsafeMutablePointer<AVFormatContext>?
        try check(avformat_open_input(&input, basePath, nil, nil), "open \(basePath)")
        defer { avformat_close_input(&input) }
        try check(avformat_find_stream_info(input, nil), "probe \(basePath)")
        guard let input else { throw Failure(description: "no input context") }
        let streams = (0..<Int(input.pointee.nb_streams)).map { input.pointee.streams[$0]! }
        let videoIndex = streams.firstIndex { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO }

        var output: Output?
        var starts: [Int64] = []
        var pending = packets.sorted { $0.pts < $1.pts }[...]
        let packet = av_packet_alloc()
        defer { var p = packet; av_packet_free(&p) }
        var nextCut = 0.0
        while av_read_frame(input, packet) >= 0 {
            defer { av_packet_unref(packet) }
            let stream = streams[Int(packet!.pointee.stream_index)]
            let dts90k = av_rescale_q(packet!.pointee.dts, stream.pointee.time_base, AVRational(num: 1, den: 90_000))
            let isKeyVideo = packet!.pointee.stream_index == Int32(videoIndex ?? -1)
                && packet!.pointee.flags & AV_PKT_FLAG_KEY != 0
            if output == nil || (segmentDuration != nil && isKeyVideo && Double(dts90k) / 90_000 >= nextCut) {
                try output?.finish()
                output = try Output(path: path(starts.count), template: streams)
                starts.append(av_rescale_q(packet!.pointee.pts, stream.pointee.time_base, AVRational(num: 1, den: 90_000)))
                nextCut = Double(dts90k) / 90_000 + (segmentDuration ?? .infinity)
            }
            while let next = pending.first, next.pts <= dts90k {
                try output!.writeID3(next)
                pending.removeFirst()
            }
            try output!.copy(packet!, from: stream)
        }
        for next in pending { try output?.writeID3(next) }
        try output?.finish()
        return starts
    }

    private final class Output {
        private var context: UnsafeMutablePointer<AVFormatContext>?
        private let id3Index: Int32
        private var finished = false

        init(path: String, template: [UnsafeMutablePointer<AVStream>]) throws {
            try check(avformat_alloc_output_context2(&context, nil, "mpegts", path), "create \(path)")
            for source in template {
                let stream = avformat_new_stream(context, nil)!
                avcodec_parameters_copy(stream.pointee.codecpar, source.pointee.codecpar)
                stream.pointee.codecpar.pointee.codec_tag = 0
                stream.pointee.time_base = source.pointee.time_base
            }
            let id3 = avformat_new_stream(context, nil)!
            id3.pointee.codecpar.pointee.codec_type = AVMEDIA_TYPE_DATA
            id3.pointee.codecpar.pointee.codec_id = AV_CODEC_ID_TIMED_ID3
            id3.pointee.time_base = AVRational(num: 1, den: 90_000)
            id3Index = id3.pointee.index
            // The muxer otherwise adds 2 x max_delay to every timestamp; keep the schedule's PTS.
            context!.pointee.max_delay = 0
            try check(avio_open(&context!.pointee.pb, path, AVIO_FLAG_WRITE), "open \(path) for writing")
            try check(avformat_write_header(context, nil), "write header of \(path)")
        }

        func copy(_ packet: UnsafeMutablePointer<AVPacket>, from source: UnsafeMutablePointer<AVStream>) throws {
            let stream = context!.pointee.streams[Int(packet.pointee.stream_index)]!
            av_packet_rescale_ts(packet, source.pointee.time_base, stream.pointee.time_base)
            try check(av_write_frame(context, packet), "write media packet")
        }

        func writeID3(_ scheduled: ScheduledPacket) throws {
            let bytes = scheduled.bytes
            var packet = av_packet_alloc()
            defer { av_packet_free(&packet) }
            try check(av_new_packet(packet, Int32(bytes.count)), "allocate ID3 packet")
            bytes.withUnsafeBufferPointer { packet!.pointee.data.update(from: $0.baseAddress!, count: bytes.count) }
            packet!.pointee.pts = scheduled.pts
            packet!.pointee.dts = scheduled.pts
            packet!.pointee.stream_index = id3Index
            packet!.pointee.flags = AV_PKT_FLAG_KEY
            try check(av_write_frame(context, packet), "write ID3 packet")
        }

        func finish() throws {
            guard !finished else { return }
            finished = true
            try check(av_write_trailer(context), "write trailer")
            avio_closep(&context!.pointee.pb)
            avformat_free_context(context)
            context = nil
        }
    }
}

private func check(_ result: Int32, _ what: String) throws {
    guard result < 0 else { return }
    var buffer = [CChar](repeating: 0, count: 128)
    av_strerror(result, &buffer, buffer.count)
    let message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    throw LibAVRemuxer.Failure(description: "\(what): \(message)")
}
