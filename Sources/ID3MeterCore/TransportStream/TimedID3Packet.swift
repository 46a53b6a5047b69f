/// The bytes of one timed-ID3 access unit, as the demuxer hands them over: normally one PES
/// payload, or the PES payloads joined into one tag.
package struct TimedID3Packet: Sendable, Equatable {
    package var bytes: [UInt8]
    /// 90 kHz ticks, 33 bits, as carried in the stream; `nil` when no PES on the PID had one.
    package var pts: Int64?
    package var pid: Int
    /// The program_number of the PMT that lists the PID.
    package var program: Int?
    /// Where the packet's first PES starts in its input.
    package var position: Int64
    /// The caller's label for the bytes it started in (an HLS segment).
    package var unit: Int
    /// What was unusual about the way it was carried, for the tags' notes.
    package var notes: [String]
    /// The same, for the QA report's structural tests.
    package var faults: Carriage.Faults = []
    /// The PTS of the program's last audio PES before it.
    package var audioPTS: Int64?
}
