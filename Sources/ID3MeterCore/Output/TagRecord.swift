import FoundationEssentials

/// One output line: a Nielsen tag, another ID3 frame (`--all`), or a packet that did not decode.
/// Field names are the JSONL keys and CSV columns.
///
/// A record refers to what the event holds and makes its fields when they are read: a scan
/// makes one a tag and writes it at once, and building every field as a string (then copying
/// the record about) had cost more than finding the tag.
package struct TagRecord: Encodable, Sendable {
    package enum Kind: String, Encodable, Sendable { case nielsen, frame, malformed }

    package let type: Kind
    package let origin: TagOrigin
    /// 90 kHz ticks as carried in the stream.
    package let pts: Int64?
    private let date: Date?
    /// The tag of a `.nielsen` record.
    package let nielsen: NielsenTag?
    /// The frame of a `.frame` record.
    private let otherFrame: ID3Frame?
    private let version: ID3Tag.Version?
    package let reason: String?
    package let notes: [String]?
    /// The program and PID of an MPEG-TS tag.
    private let transportStream: TimedTag.TransportStreamPlace?

    package init(type: Kind, origin: TagOrigin, pts: Int64?, programDateTime: Date? = nil, nielsen: NielsenTag? = nil,
                 frame: ID3Frame? = nil, id3Version: ID3Tag.Version? = nil, reason: String? = nil, notes: [String]? = nil,
                 transportStream: TimedTag.TransportStreamPlace? = nil) {
        self.transportStream = transportStream
        self.type = type
        self.origin = origin
        self.pts = pts
        date = programDateTime
        self.nielsen = nielsen
        otherFrame = frame
        version = id3Version
        self.reason = reason
        self.notes = notes
    }

    package var source: String { origin.source }
    package var segment: String? { origin.segment?.uri }
    package var mediaSequence: Int? { origin.segment?.mediaSequence }
    package var discontinuitySequence: Int? { origin.segment?.discontinuitySequence }
    /// A DASH segment's Period, Representation and `$Time$`.
    package var period: String? { origin.segment?.dash?.period }
    package var representation: String? { origin.segment?.dash?.representation }
    package var segmentTime: Int? { origin.segment?.dash?.time }
    /// The HLS interstitial whose asset carried the tag.
    package var interstitial: String? { origin.segment?.interstitial?.id }
    /// An MPEG-TS tag's program_number and PID.
    package var program: Int? { transportStream?.program }
    package var pid: Int? { transportStream?.pid }
    /// `pts` in seconds.
    package var time: Double? { pts.map(PTS.seconds) }
    package var programDateTime: String? { date.map(ProgramDateTime.format) }
    package var payload: String? { nielsen?.payload }
    package var tagID: String? { nielsen.map { TagIdentity.of(payload: $0.payload) } }
    package var pcCID: String? { nielsen?.pcCID }
    package var fdCID: String? { nielsen?.fdCID }
    package var pcOffset: String? { nielsen?.pcOffset }
    package var fdOffset: String? { nielsen?.fdOffset }
    package var breakout: String? { nielsen?.breakout }
    package var valid: Bool? { nielsen?.isValid }
    package var placeholderPCCID: Bool? { nielsen?.hasPlaceholderPCCID }
    package var issues: [String]? { nielsen.map { $0.issues.map(\.description) } }
    /// The frame identifier of a `.frame` record.
    package var frame: String? { otherFrame?.id }
    package var owner: String? { otherFrame?.label }
    package var size: Int? { otherFrame?.size }
    package var id3Version: String? { version?.description }

    /// The records for a scan event, handed to `each` in order: one per Nielsen tag, and with
    /// `allFrames` one per other frame. (Handed over, not returned: an array of them cost a copy
    /// of each record, and a scan makes one a tag.)
    package static func records(for event: MediaEvent, allFrames: Bool, _ each: (TagRecord) -> Void) {
        switch event {
        case .opened, .failure, .warning, .segment, .resumed, .mediaTime:
            return
        case .malformed(let error, let pts, let origin):
            each(TagRecord(type: .malformed, origin: origin, pts: pts, reason: error.description))
        case .tag(let timed):
            let date = timed.programDateTime
            for frame in timed.tag.frames {
                var nielsen: NielsenTag?
                if case .priv(let owner, _) = frame.content { nielsen = timed.nielsenTags.first { $0.payload == owner } }
                guard nielsen != nil || allFrames else { continue }
                // A frame that could not be decoded says why in its own record, not in its neighbours'.
                var reason: String?, notes = (timed.carriage?.note).map { [$0] + timed.tag.notes } ?? timed.tag.notes
                if case .skipped(let why) = frame.content {
                    reason = why
                    notes.append("frame \(frame.id) \(why), not decoded")
                }
                each(TagRecord(type: nielsen == nil ? .frame : .nielsen, origin: timed.origin, pts: timed.pts, programDateTime: date,
                               nielsen: nielsen, frame: nielsen == nil ? frame : nil, id3Version: timed.tag.version, reason: reason,
                               notes: notes.isEmpty ? nil : notes, transportStream: timed.transportStream))
            }
        }
    }

    enum CodingKeys: String, CodingKey {
        case type, source, segment, mediaSequence = "media_sequence", discontinuitySequence = "discontinuity_sequence"
        case pts, time, programDateTime = "program_date_time", payload, tagID = "tag_id", pcCID = "pc_cid", fdCID = "fd_cid"
        case pcOffset = "pc_offset", fdOffset = "fd_offset", breakout, valid, placeholderPCCID = "placeholder_pc_cid"
        case issues, frame, owner, size, id3Version = "id3_version", reason, notes
        case period, representation, segmentTime = "segment_time", program, pid, interstitial
    }

    /// The fields that are there, as `appendJSON` writes them (a test holds the two together).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(source, forKey: .source)
        try container.encodeIfPresent(segment, forKey: .segment)
        try container.encodeIfPresent(mediaSequence, forKey: .mediaSequence)
        try container.encodeIfPresent(discontinuitySequence, forKey: .discontinuitySequence)
        try container.encodeIfPresent(period, forKey: .period)
        try container.encodeIfPresent(representation, forKey: .representation)
        try container.encodeIfPresent(segmentTime, forKey: .segmentTime)
        try container.encodeIfPresent(program, forKey: .program)
        try container.encodeIfPresent(pid, forKey: .pid)
        try container.encodeIfPresent(interstitial, forKey: .interstitial)
        try container.encodeIfPresent(pts, forKey: .pts)
        try container.encodeIfPresent(time, forKey: .time)
        try container.encodeIfPresent(programDateTime, forKey: .programDateTime)
        try container.encodeIfPresent(payload, forKey: .payload)
        try container.encodeIfPresent(tagID, forKey: .tagID)
        try container.encodeIfPresent(pcCID, forKey: .pcCID)
        try container.encodeIfPresent(fdCID, forKey: .fdCID)
        try container.encodeIfPresent(pcOffset, forKey: .pcOffset)
        try container.encodeIfPresent(fdOffset, forKey: .fdOffset)
        try container.encodeIfPresent(breakout, forKey: .breakout)
        try container.encodeIfPresent(valid, forKey: .valid)
        try container.encodeIfPresent(placeholderPCCID, forKey: .placeholderPCCID)
        try container.encodeIfPresent(issues, forKey: .issues)
        try container.encodeIfPresent(frame, forKey: .frame)
        try container.encodeIfPresent(owner, forKey: .owner)
        try container.encodeIfPresent(size, forKey: .size)
        try container.encodeIfPresent(id3Version, forKey: .id3Version)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encodeIfPresent(notes, forKey: .notes)
    }
}

extension ID3Frame {
    /// What names a frame for a person: a PRIV's owner, a TXXX's description, a text frame's text
    /// (an undecoded frame has none: its `reason` says why).
    var label: String? {
        switch content {
        case .priv(let owner, _): owner
        case .userText(let description, _): description
        case .text(let values): values.joined(separator: "/")
        case .skipped, .other: nil
        }
    }
}

extension TagRecord {
    /// Appends the record as one JSON line (no line break) to `output`: the bytes `JSONEncoder`
    /// with sorted keys writes, written directly (`JSONLine`). The keys are listed here in their
    /// sorted order.
    package func appendJSON(to output: inout [UInt8]) {
        guard let nielsen else { return appendJSON(nielsenFields: nil, to: &output) }
        nielsen.withFieldBytes { appendJSON(nielsenFields: $0, to: &output) }
    }

    /// The Nielsen fields are copied from the payload's bytes, never made into strings.
    private func appendJSON(nielsenFields fields: NielsenTag.FieldBytes?, to output: inout [UInt8]) {
        JSONLine.write(appendingTo: &output) { line in
            line.add("breakout", fields?[.breakout])
            line.add("discontinuity_sequence", discontinuitySequence)
            line.add("fd_cid", fields?[.fdCID])
            line.add("fd_offset", fields?[.fdOffset])
            line.add("frame", frame)
            line.add("id3_version", id3Version)
            line.add("interstitial", interstitial)
            line.add("issues", issues)
            line.add("media_sequence", mediaSequence)
            line.add("notes", notes)
            line.add("owner", owner)
            line.add("payload", fields?.payload)
            line.add("pc_cid", fields?[.pcCID])
            line.add("pc_offset", fields?[.pcOffset])
            line.add("period", period)
            line.add("pid", pid)
            line.add("placeholder_pc_cid", placeholderPCCID)
            line.add("program", program)
            line.add("program_date_time", programDateTime)
            line.add("pts", pts)
            line.add("reason", reason)
            line.add("representation", representation)
            line.add("segment", segment)
            line.add("segment_time", segmentTime)
            line.add("size", size)
            line.add("source", source)
            line.add("tag_id", fields.map { TagIdentity.of(utf8: $0.payload) })
            line.add("time", time)
            line.add("type", type.rawValue)
            line.add("valid", valid)
        }
    }
}
