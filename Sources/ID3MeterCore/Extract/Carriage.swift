/// How a tag reached us, as far as the Validator's structural tests judge it: which tag
/// stream it belongs to, and what was wrong with the way it was carried. Read leniently, the
/// tag is delivered all the same; the QA report counts these against the Validator's tests.
package struct Carriage: Sendable, Equatable {
    /// The tag stream: tags of one stream are spaced against each other, never against
    /// another's. `PID 0x0102` (TS), `emsg www.nielsen.com:id3:v1` (fMP4), `packed audio`.
    package var stream: String
    package var faults: Faults
    /// The PTS of the program's last audio PES before the tag (MPEG-TS with an audio stream).
    package var audioPTS: Int64?
    /// What the tag's records say of the way it came, first among their notes (`emsg v1
    /// SCHEME`); not a lenient reading.
    package var note: String?
    /// The `emsg` event the tag came in: a repeat of it is not the tag again (`RepeatedEvents`).
    package var event: InbandEvent?

    package init(stream: String, faults: Faults = [], audioPTS: Int64? = nil) {
        self.stream = stream
        self.faults = faults
        self.audioPTS = audioPTS
    }

    /// What was wrong with the carriage as Nielsen's rules go: the tag was still read.
    package struct Faults: OptionSet, Sendable, Hashable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }

        /// The PMT lists the timed-ID3 PID without the metadata descriptor naming `ID3 `:
        /// Apple's rules want it, and players that follow them see no tags.
        package static let undeclaredStream = Faults(rawValue: 1 << 0)
        /// The metadata PES has no PTS (the Validator's test 26): the time is the PID's
        /// previous one, or none.
        package static let noPTS = Faults(rawValue: 1 << 1)
        /// More than one tag in one PES (Nielsen's rule: one tag, one PES).
        package static let sharedPES = Faults(rawValue: 1 << 2)
        /// An `emsg` of Nielsen's scheme whose value is not `1`.
        package static let eventValue = Faults(rawValue: 1 << 3)
    }

    /// Nielsen's own emsg scheme, whose value must be `1`.
    package static let nielsenEventScheme = "www.nielsen.com:id3:v1"
}
