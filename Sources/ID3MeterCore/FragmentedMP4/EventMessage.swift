/// A DASH event message box, `emsg` (ISO/IEC 23009-1 §5.10.3.3), version 0 or 1.
struct EventMessage: Equatable {
    enum Time: Equatable {
        /// Version 0: after the earliest presentation time of the segment it is in.
        case delta(Int)
        /// Version 1: on the media timeline.
        case absolute(Int)
    }

    var schemeIDURI: String
    var value: String
    var timescale: Int
    var time: Time
    var eventDuration: Int
    var id: Int
    var messageData: [UInt8]

    /// Schemes whose message data is an ID3 tag: AOM's (id3-emsg), Apple's (HLS timed metadata
    /// in CMAF) and Nielsen's own.
    static let id3Schemes: Set<String> = [
        "https://aomedia.org/emsg/ID3", "https://developer.apple.com/streaming/emsg-id3", "www.nielsen.com:id3:v1",
    ]

    var carriesID3: Bool { Self.id3Schemes.contains(schemeIDURI) }

    /// Reads the content of an `emsg` box, or says why it is malformed.
    static func parse(_ bytes: [UInt8], box: Box) -> Result<EventMessage, ID3ParseError> {
        func fail(_ reason: ID3ParseError.Reason) -> Result<EventMessage, ID3ParseError> {
            .failure(ID3ParseError(reason, offset: box.content.lowerBound))
        }
        guard case (let version, var reader)? = box.fullBoxFields(in: bytes) else { return fail(.emsgTruncated(version: nil)) }
        switch version {
        case 0:
            guard let scheme = reader.readCString(), let value = reader.readCString(),
                  let timescale = reader.readInt(4), let delta = reader.readInt(4),
                  let duration = reader.readInt(4), let id = reader.readInt(4) else { return fail(.emsgTruncated(version: 0)) }
            return .success(EventMessage(schemeIDURI: scheme, value: value, timescale: timescale, time: .delta(delta),
                                         eventDuration: duration, id: id, messageData: Array(reader.rest())))
        case 1:
            guard let timescale = reader.readInt(4), let time = reader.readInt(8), let duration = reader.readInt(4),
                  let id = reader.readInt(4), let scheme = reader.readCString(), let value = reader.readCString() else {
                return fail(.emsgTruncated(version: 1))
            }
            return .success(EventMessage(schemeIDURI: scheme, value: value, timescale: timescale, time: .absolute(time),
                                         eventDuration: duration, id: id, messageData: Array(reader.rest())))
        default:
            return fail(.emsgUnknownVersion(Int(version)))
        }
    }
}
