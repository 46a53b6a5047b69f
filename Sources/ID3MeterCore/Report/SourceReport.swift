import FoundationEssentials

/// Something the QA report points at: where in the stream, and what.
package struct Finding: Encodable, Sendable, Equatable {
    public var pts: Int64?
    /// `pts` in seconds.
    public var time: Double?
    public var programDateTime: String?
    public var segment: String?
    public var detail: String
    /// The check (`ValidatorCheck.name`) it counts against; `nil` for what only informs.
    public var check: String?

    enum CodingKeys: String, CodingKey { case pts, time, programDateTime = "program_date_time", segment, detail, check }
}

/// The time between two consecutive Nielsen tags.
package struct Gap: Encodable, Sendable, Equatable {
    public var seconds: Double
    /// The tag that ends the gap.
    public var at: Finding
}

/// The QA findings for one input (a file, or a playlist with its segments).
package struct SourceReport: Encodable, Sendable {
    /// The Validator flags a DATA tag lasting under 4 s or over 12 s (its test 5). A tag's span
    /// needs Nielsen's keys; the spacing of consecutive DATA tags of one tag stream stands for it.
    public static let shortGap = 4.0
    public static let longGap = 12.0
    /// The Validator flags more than 9 s between one DATA tag's end and the next one's start (its
    /// test 4). A DATA tag spans 10 s, so DATA tags more than 19 s apart stand for that.
    public static let timeGap = 10.0 + 9.0
    /// The SDK sends placeholder CIDs for 10-20 s after a source change; a longer run is a finding.
    public static let placeholderRun = 20.0
    /// The Validator flags 310 s without an INFO tag (its tests 12 and 13).
    public static let infoInterval = 310.0
    /// Consecutive DATA tags of one program: their PC and FD offsets should advance as their PTS do,
    /// within this many seconds (standing for the Validator's tag-time test 23).
    public static let offsetDrift = 10.0
    /// The Validator flags a tag more than 15 s from the program's audio around it (its test 22).
    public static let audioDistance = 15.0
    /// The first to the last DATA tag should span the media's duration within this many seconds
    /// (the Validator's summary compares the two).
    public static let coverageSlack = 20.0
    /// Nielsen's cadence: a DATA tag every 10 s of media.
    public static let dataTagPeriod = 10.0
    /// Each list keeps this many entries; the rest are counted in `omitted`, so that a report's
    /// memory does not grow with its input.
    public static let keptFindings = 1_000

    public var source: String
    /// False when the input itself could not be read (a failure that names no segment).
    public var readable = true
    /// The first few of each kind, then one line per kind saying how many more (`ProblemTally`).
    public var failures: [String] = []
    public var warnings: [String] = []
    /// ID3 tags of any owner; `nielsenTags` are the Nielsen PRIV frames among them.
    public var id3Tags = 0
    public var malformedPackets: [Finding] = []
    public var nielsenTags = 0
    public var validTags = 0
    /// Invalid tags by issue code (a tag with two issues counts under both).
    public var invalidByReason: [String: Int] = [:]
    public var invalidTags: [Finding] = []
    /// DATA and INFO tags among the Nielsen tags (`NielsenTag.Kind`).
    public var dataTags = 0
    public var infoTags = 0
    /// The tag streams read (`Carriage.stream`): each is judged on its own.
    public var streams: [String] = []
    public var placeholderTags: [Finding] = []
    /// Runs of placeholder PC CIDs longer than `placeholderRun`.
    public var placeholderRuns: [Finding] = []
    public var duplicates: [Finding] = []
    /// DATA tags under `shortGap` or over `longGap` after the one before on their stream.
    public var shortGaps: [Gap] = []
    public var longGaps: [Gap] = []
    /// DATA tags more than `timeGap` after the one before on their stream.
    public var timeGaps: [Gap] = []
    public var longestGap: Gap?
    /// More than `infoInterval` without an INFO tag on a stream.
    public var lateInfoTags: [Finding] = []
    /// The shortest and the longest time between consecutive INFO tags of a stream.
    public var infoTagInterval: ClosedRange<Double>?
    /// Null CIDs with a non-zero offset; PC offsets that drift from the PTS.
    public var offsetErrors: [Finding] = []
    /// How tags were carried and enveloped, against Nielsen's rules: the PMT descriptor, a PTS
    /// on each PES, one tag per PES, the 271-byte ID3v2.4 tag with one PRIV frame ending `A`,
    /// the emsg value.
    public var structure: [Finding] = []
    /// The report's verdicts, one row per check, in the Validator's terms.
    public var checks: [ValidatorCheck] = []
    public var discontinuities: [Finding] = []
    public var segments = 0
    public var segmentsWithoutTags: [String] = []
    /// Seconds of media read: the segments' EXTINF for a playlist, the audio's first to last PTS
    /// for an MPEG-TS file; `nil` when neither is known.
    public var mediaSeconds: Double?
    /// Seconds from the first DATA tag to the last on the stream that has most of them.
    public var dataTagSpan: Double?
    /// Entries left out of each list past `keptFindings`, by the list's key.
    public var omitted: [String: Int] = [:]
    /// Tags read around something wrong (a cut end, garbage after the frames, a reading other than
    /// the spec's, a frame not decoded...), by kind: every recovery is counted, none is silent.
    public var recoveries: [String: Int] = [:]
    /// The tags in time, for the HTML report, when the builder recorded them; not in the JSON report.
    package var timeline: TagTimeline?

    enum CodingKeys: String, CodingKey {
        case source, readable, failures, warnings, omitted, recoveries, id3Tags = "id3_tags", malformedPackets = "malformed_packets"
        case nielsenTags = "nielsen_tags", validTags = "valid_tags", invalidByReason = "invalid_by_reason"
        case dataTags = "data_tags", infoTags = "info_tags", streams, checks
        case invalidTags = "invalid_tags", placeholderTags = "placeholder_tags", placeholderRuns = "placeholder_runs", duplicates
        case shortGaps = "short_gaps", longGaps = "long_gaps", timeGaps = "time_gaps", longestGap = "longest_gap", discontinuities
        case lateInfoTags = "late_info_tags", infoTagInterval = "info_tag_interval_seconds", offsetErrors = "offset_errors", structure
        case segments, segmentsWithoutTags = "segments_without_tags", mediaSeconds = "media_seconds", dataTagSpan = "data_tag_span"
    }

    public init(source: String) { self.source = source }

    /// How many entries the list under `key` had, kept and omitted.
    func total(_ key: CodingKeys, kept: Int) -> Int { kept + omitted[key.stringValue, default: 0] }

    /// Placeholder tags, listed and not.
    package var placeholderTagCount: Int { total(.placeholderTags, kept: placeholderTags.count) }

    /// The checks this source fails, by name.
    public var failedChecks: [String] { checks.filter { $0.status == .fail }.map(\.name) }
}

/// Builds a `SourceReport` from one source's scan events, in stream order.
package struct SourceReportBuilder {
    private var built: SourceReport
    private var failures = ProblemTally()
    private var warnings = ProblemTally()
    /// Entries past `keptFindings`, by list (`omittedSlot`), folded into the report's `omitted`
    /// when it is read: with a tag every second, every tag is a short gap, and looking the list up
    /// by key path and counting it by name cost more than the gap.
    private var omittedCounts = [Int](repeating: 0, count: keptLists.count)
    /// Each tag stream's own state, by `Carriage.stream` ("" for a source that names none).
    private var streams: [String: TagStreamState] = [:]
    /// Errors by check name, counted whole (the lists keep the first `keptFindings`).
    private var errors: [String: Int] = [:]
    /// The kinds of lenient readings: the first message of each, and whether others differed.
    private var recoveryNames: [String: (message: String, varied: Bool)] = [:]
    private var recoveryCounts: [String: Int] = [:]
    private var nielsenInSegment = 0
    /// Nielsen tags counted as a scan's summary and a `serve` channel count them.
    private var counts = NielsenCounts()
    /// Each media sequence's duration: a variant's and its audio rendition's segments of one
    /// sequence are the same stretch of media, counted once.
    /// By discontinuity and media sequence: a DASH presentation's Periods each number their
    /// segments from the start, and a rendition's segment counts once with its variant's.
    private var segmentDurations: [SegmentPlace: Double] = [:]
    /// Their sum in key order while each new key came after the last, as a live stream's do: a
    /// report is made at each of a `serve` channel's segments, and sorting every duration of
    /// the window each time was a tenth of that. `nil` once a key came out of order or a
    /// duration changed: they are then sorted and summed at each report, as before.
    private var durationsInOrder: (last: SegmentPlace?, sum: Double)? = (nil, 0)
    private struct SegmentPlace: Hashable, Comparable {
        var discontinuity: Int
        var sequence: Int
        /// An interstitial's segment shares the number of the primary segment before it: its
        /// asset's URI tells it apart.
        var asset: String?
        /// The parts of a segment a break divides each add their media time (milliseconds in).
        var partOffset: Int
        static func < (a: SegmentPlace, b: SegmentPlace) -> Bool {
            (a.discontinuity, a.sequence, a.asset ?? "", a.partOffset) < (b.discontinuity, b.sequence, b.asset ?? "", b.partOffset)
        }
    }
    /// The first and the latest media PTS of an input (`MediaEvent.mediaTime`).
    private var mediaTimes: (first: Int64, last: Int64)?
    /// Tags placed against the program's audio (test 22 is judged only when there are some).
    private var tagsPlacedOnAudio = 0
    private let tolerances: QATolerances
    /// A failure or warning in the report's words (the command line adds its flags).
    private let words: @Sendable (InputFailure) -> String
    /// The source's tags in time, for the HTML report; `nil` when not asked for.
    public private(set) var timeline: TimelineRecorder?

    /// Findings listed per kind: `keptFindings`, or none when no report will be written (then
    /// every finding is only counted, and none has its times formatted: that cost a scan of many
    /// short files more than reading their tags).
    private let listed: Int

    /// A builder for the report on `source`; with `timeline`, it also records the tags' timeline.
    /// Without `listingFindings`, findings are counted but not listed. `describing` puts a failure
    /// or warning in words.
    public init(source: String, timeline: TimelineRecorder? = nil, listingFindings: Bool = true, tolerances: QATolerances = QATolerances(),
                describing: @escaping @Sendable (InputFailure) -> String = { "\($0)" }) {
        built = SourceReport(source: source)
        words = describing
        self.timeline = timeline
        self.tolerances = tolerances
        listed = listingFindings ? SourceReport.keptFindings : 0
    }

    /// The report so far, with a line for each kind of failure or warning past the first few,
    /// and the checks judged on what has been read (a stream still open is judged to here).
    public var report: SourceReport {
        var builder = self
        for key in builder.streams.keys.sorted() { builder.closeStream(key) }
        var report = builder.built
        report.nielsenTags = counts.tags
        report.validTags = counts.valid
        for key in Self.keptLists where builder.omittedCounts[Self.omittedSlot(key)] > 0 {
            report.omitted[key.stringValue, default: 0] += builder.omittedCounts[Self.omittedSlot(key)]
        }
        report.failures += builder.failures.summaries()
        report.warnings += builder.warnings.summaries()
        for (kind, name) in recoveryNames {
            report.recoveries[name.varied ? "\(name.message) (and others like it)" : name.message] = recoveryCounts[kind]
        }
        report.streams = streams.keys.filter { !$0.isEmpty }.sorted()
        report.mediaSeconds = builder.mediaDuration
        report.dataTagSpan = builder.built.dataTags > 0 ? builder.streams.values.map(\.dataSpan).max() : nil
        report.checks = builder.checks(report)
        report.timeline = timeline?.timeline
        return report
    }

    /// Takes the next event of the source, in stream order: tags, segment ends and problems.
    public mutating func add(_ event: MediaEvent) {
        timeline?.add(event)
        switch event {
        case .opened, .resumed:
            break
        case .mediaTime(let pts, _):
            mediaTimes = (mediaTimes?.first ?? pts, pts)
        case .tag(let timed):
            built.id3Tags += 1
            for note in timed.tag.notes { recover(note) }
            for frame in timed.tag.frames {
                if case .skipped(let reason) = frame.content { recover("frame not decoded: \(reason)") }
            }
            for nielsen in timed.nielsenTags { add(nielsen, timed) }
        case .segment(let segment):
            if let duration = segment.duration {
                let place = SegmentPlace(discontinuity: segment.discontinuitySequence, sequence: segment.mediaSequence,
                                         asset: segment.interstitial.map { _ in segment.uri },
                                         partOffset: segment.part.map { Int(($0.offset * 1_000).rounded()) } ?? 0)
                let before = segmentDurations[place]
                let kept = max(before ?? 0, duration)
                segmentDurations[place] = kept
                if before == nil, let inOrder = durationsInOrder, inOrder.last.map({ $0 < place }) ?? true {
                    durationsInOrder = (place, inOrder.sum + kept)
                } else if before != kept {
                    durationsInOrder = nil
                }
            }
            // A segment a break divides is counted, and judged for tags, once its last part is in.
            guard segment.part?.isLast ?? true else { break }
            built.segments += 1
            // Listed, not a check: segments shorter than Nielsen's 10 s cadence are often without
            // one, and a tag missing for long is what the spacing checks judge.
            if nielsenInSegment == 0 {
                keep(segment.uri, in: \.segmentsWithoutTags, .segmentsWithoutTags)
            }
            nielsenInSegment = 0
        case .malformed(let error, let pts, let origin):
            count("pes_incomplete_tag")
            keep(Self.finding(pts: pts, origin: origin, date: nil, detail: error.description, check: "pes_incomplete_tag"),
                 in: \.malformedPackets, .malformedPackets)
        case .failure(let failure):
            count("read_errors")
            if failures.admit(failure.description) { built.failures.append(words(failure)) }
            if failure.segment == nil { built.readable = false }
        case .warning(let warning):
            if warnings.admit(warning.description) { built.warnings.append(words(warning)) }
        }
    }

    /// Counts a lenient reading under its kind (its message with the numbers taken out), and
    /// names the kind by its first message, digits kept.
    private mutating func recover(_ message: String) {
        let kind = ProblemTally.kind(of: message)
        recoveryCounts[kind, default: 0] += 1
        if let name = recoveryNames[kind] {
            if !name.varied, name.message != message { recoveryNames[kind] = (name.message, true) }
        } else {
            recoveryNames[kind] = (message, false)
        }
    }

    private mutating func count(_ check: String) { errors[check, default: 0] += 1 }

    private mutating func add(_ nielsen: NielsenTag, _ timed: TimedTag) {
        counts.add(nielsen)
        nielsenInSegment += 1
        // Made only for a finding that is kept: formatting its times costs more than reading the tag.
        func here(_ detail: String, _ check: String? = nil) -> Finding {
            Self.finding(pts: timed.pts, origin: timed.origin, date: timed.programDateTime, detail: detail, check: check)
        }
        let key = timed.carriage?.stream ?? ""
        if let audio = timed.carriage?.audioPTS, let pts = timed.pts, timed.carriage?.faults.contains(.noPTS) == false {
            tagsPlacedOnAudio += 1
            let seconds = PTS.seconds(PTS.distance(from: audio, to: pts))
            if abs(seconds) > SourceReport.audioDistance {
                count("tag_placement")
                keep(here("\(FixedPoint.string(seconds, places: 3, sign: true)) s from the program's audio PES before it (Validator test 22: "
                                 + "\(FixedPoint.string(SourceReport.audioDistance, places: 0)) s)", "tag_placement"), in: \.structure, .structure)
            }
        }
        // Taken out and put back, not copied: a copy left in the dictionary would make every
        // insert into its seen payloads copy the whole table (a dense file went 50 times slower).
        var stream = streams.removeValue(forKey: key) ?? TagStreamState()
        defer { streams[key] = stream }

        // One tag-format error a tag, listed once: with its shape issues when it has some.
        let envelope = Self.envelopeProblems(timed.tag)
        let misshapen = nielsen.issues.contains { if case .breakout = $0 { false } else { true } }
        if nielsen.issues.contains(where: { if case .breakout = $0 { true } else { false } }) { count("breakout") }
        if misshapen || !envelope.isEmpty { count("tag_format") }
        if !nielsen.isValid {
            nielsen.issues.forEach { built.invalidByReason[$0.code, default: 0] += 1 }
            let detail = (nielsen.issues.map(\.description) + (misshapen ? envelope : [])).joined(separator: "; ")
            keep(here(detail, misshapen ? "tag_format" : "breakout"), in: \.invalidTags, .invalidTags)
        }
        if !misshapen, !envelope.isEmpty {
            keep(here("tag format (Validator test 2): " + envelope.joined(separator: ", "), "tag_format"), in: \.structure, .structure)
        }
        carriageFaults(timed.carriage?.faults ?? [], stream: &stream, here: here)
        if nielsen.hasOffsetOnNullCID {
            count("cid_ts_offset")
            keep(here("a null CID with a non-zero offset (Validator test 8, -55)", "cid_ts_offset"), in: \.offsetErrors, .offsetErrors)
        }
        // A tag stream is what one player reads: the same tag on two PIDs is no duplicate.
        if !stream.seenPayloads.insert(nielsen.payload) {
            count("duplicates")
            keep(here("same payload as an earlier tag", "duplicates"), in: \.duplicates, .duplicates)
        }
        // A PES without a PTS was given its PID's previous one: its time is not its own.
        let pts = timed.carriage?.faults.contains(.noPTS) == true ? nil : timed.pts
        let sequence = timed.origin.segment?.discontinuitySequence
        stream.noteTime(pts, sequence: sequence)
        // A tag without a time of its own lies somewhere between its neighbours: the spacing
        // across it is not measured (the Validator times tags by their payload, which it decrypts).
        if pts == nil { stream.spacing.forgetPrevious() }
        switch nielsen.kind {
        case .info:
            built.infoTags += 1
            let info = stream.info(at: pts, sequence: sequence)
            if let interval = info.interval {
                let known = built.infoTagInterval
                built.infoTagInterval = min(known?.lowerBound ?? interval, interval)...max(known?.upperBound ?? interval, interval)
            }
            if let late = info.late { lateInfo(late, here) }
        case .data:
            built.dataTags += 1
            if nielsen.hasPlaceholderPCCID { keep(here("placeholder PC CID"), in: \.placeholderTags, .placeholderTags) }
            if let run = stream.placeholder(nielsen.hasPlaceholderPCCID, at: pts, sequence: sequence) { placeholderRun(run) }
            let drifts = stream.offsetDrifts(of: nielsen, at: pts, sequence: sequence)
            if !drifts.isEmpty {
                count("tag_time")
                let said = drifts.map { "\($0.field) offset " + "moved \(FixedPoint.string($0.offset, places: 0)) s from the tag before, its PTS \(FixedPoint.string($0.pts, places: 3)) s" }
                keep(here(said.joined(separator: "; ") + " (proxy for Validator test 23)", "tag_time"), in: \.offsetErrors, .offsetErrors)
            }
            stream.noteDataTime(pts, sequence: sequence)
            spacing(stream.spacing.step(pts: pts, discontinuitySequence: sequence), here)
        }
    }

    private mutating func carriageFaults(_ faults: Carriage.Faults, stream: inout TagStreamState, here: (String, String?) -> Finding) {
        if faults.contains(.undeclaredStream), !stream.reportedUndeclared {
            stream.reportedUndeclared = true
            count("pmt_descriptor")
            keep(here("the PMT lists this timed-ID3 stream without the metadata descriptor", "pmt_descriptor"), in: \.structure, .structure)
        }
        if faults.contains(.noPTS) {
            count("metadata_pes_pts")
            keep(here("metadata PES without a PTS (Validator test 26)", "metadata_pes_pts"), in: \.structure, .structure)
        }
        if faults.contains(.sharedPES) {
            count("one_tag_per_pes")
            keep(here("more than one tag in one PES", "one_tag_per_pes"), in: \.structure, .structure)
        }
        if faults.contains(.eventValue) {
            count("emsg_value")
            keep(here("emsg of scheme \(Carriage.nielsenEventScheme) with a value other than 1", "emsg_value"), in: \.structure, .structure)
        }
    }

    private mutating func spacing(_ step: TagSpacing.Step, _ here: (String, String?) -> Finding) {
        switch step {
        case .none:
            break
        case .discontinuity:
            keep(here("EXT-X-DISCONTINUITY before this tag", nil), in: \.discontinuities, .discontinuities)
        case .jump(let seconds):
            keep(here("PTS jumps \(FixedPoint.string(seconds, places: 3, sign: true)) s", nil), in: \.discontinuities, .discontinuities)
        case .gap(let seconds):
            func gap(_ check: String? = nil) -> Gap { Gap(seconds: seconds, at: here("\(FixedPoint.string(seconds, places: 3)) s since the DATA tag before", check)) }
            if seconds < SourceReport.shortGap || seconds > SourceReport.longGap {
                count("tag_duration")
                if seconds < SourceReport.shortGap { keep(gap("tag_duration"), in: \.shortGaps, .shortGaps) }
                else { keep(gap("tag_duration"), in: \.longGaps, .longGaps) }
            }
            if seconds > SourceReport.timeGap {
                count("time_gap")
                keep(gap("time_gap"), in: \.timeGaps, .timeGaps)
            }
            if seconds > built.longestGap?.seconds ?? -1 { built.longestGap = gap() }
        }
    }

    private mutating func lateInfo(_ seconds: Double, _ here: (String, String?) -> Finding) {
        count("info_tag_interval")
        keep(here("\(FixedPoint.string(seconds, places: 1)) s without an INFO tag (Validator tests 12-13: \(FixedPoint.string(SourceReport.infoInterval, places: 0)) s)",
                  "info_tag_interval"),
             in: \.lateInfoTags, .lateInfoTags)
    }

    private mutating func placeholderRun(_ run: TagStreamState.PlaceholderRun) {
        count("placeholder_run")
        let detail = "placeholder PC CID for \(FixedPoint.string(run.seconds, places: 1)) s (the SDK sends them for 10-20 s after a source change)"
        keep(Finding(pts: run.start, time: PTS.seconds(run.start), programDateTime: nil, segment: nil, detail: detail, check: "placeholder_run"),
             in: \.placeholderRuns, .placeholderRuns)
    }

    /// Ends every stream's open runs and intervals at its last tag.
    private mutating func closeStream(_ key: String) {
        guard var stream = streams[key] else { return }
        if let run = stream.endPlaceholderRun() { placeholderRun(run) }
        if let late = stream.trailingInfoGap() {
            lateInfo(late) { detail, check in
                Finding(pts: stream.lastTime?.pts, time: stream.lastTime.map { PTS.seconds($0.pts) }, detail: detail + " to the stream's last tag",
                        check: check)
            }
        }
        streams[key] = stream
    }

    /// Why `tag` is not the envelope Nielsen's tags come in: ID3v2.4, one PRIV frame whose private
    /// data is the one byte `A`, 271 bytes in all.
    /// A packed-audio segment's first tag carries its timestamp PRIV; a Nielsen frame sharing
    /// that tag reaches players all the same, so the timestamp frame is not held against it.
    static func envelopeProblems(_ tag: ID3Tag) -> [String] {
        var problems: [String] = []
        let privs = tag.privFrames
        let stamped = privs.contains { $0.owner == PackedAudioReader.timestampOwner }
        if tag.version != .v2_4 { problems.append("ID3v\(tag.version), not 2.4") }
        if tag.frames.count != (stamped ? 2 : 1) { problems.append("\(tag.frames.count) frames, not one PRIV") }
        if let data = privs.first(where: { $0.owner.hasPrefix(NielsenTag.ownerPrefix) })?.data, data != [UInt8(ascii: "A")] {
            problems.append(data.isEmpty ? "no private byte after the owner (-3)" : "private data of \(data.count) bytes, not 'A' (-3)")
        }
        if !stamped, tag.byteCount != 271 { problems.append("\(tag.byteCount) bytes, not 271") }
        return problems
    }

    /// The media's duration: a playlist's segments, else an MPEG-TS file's audio from its first
    /// PTS to its last (unknown when that is negative or past a jump).
    private var mediaDuration: Double? {
        if built.segments > 0 {
            // In sequence order: a dictionary's order changes from run to run, and with it the last bit of a sum.
            let seconds = durationsInOrder?.sum ?? segmentDurations.sorted { $0.key < $1.key }.reduce(0) { $0 + $1.value }
            return seconds > 0 ? seconds : nil
        }
        guard let mediaTimes else { return nil }
        let seconds = PTS.seconds(PTS.distance(from: mediaTimes.first, to: mediaTimes.last))
        return seconds > 0 ? seconds : nil
    }

    private func checks(_ report: SourceReport) -> [ValidatorCheck] {
        let isTransportStream = report.streams.contains { $0.hasPrefix("PID ") }
        let hasEvents = report.streams.contains { $0.hasPrefix("emsg ") }
        func errors(_ name: String, test: Int?, _ basis: String) -> ValidatorCheck {
            .errors(name, test: test, count: self.errors[name, default: 0], tolerated: tolerances[name], basis: basis)
        }
        func transportStream(_ check: ValidatorCheck) -> ValidatorCheck {
            isTransportStream ? check : .notJudged(check.name, test: check.test, because: "MPEG-TS only")
        }
        let keys = "needs Nielsen's keys (the payload is encrypted)"
        // A DATA tag every 12 s at the least (the longest a DATA tag may last), over the media's
        // duration when known. The Validator's own minimum is not public (its example: 237 for
        // 915 s whose tags came every 3 s).
        let dataNeeded = report.mediaSeconds.map { Int($0 / SourceReport.longGap) } ?? (report.nielsenTags > 0 ? 1 : 0)
        let coverage: ValidatorCheck
        if let media = report.mediaSeconds, let span = report.dataTagSpan {
            let short = media - span > SourceReport.coverageSlack ? 1 : 0
            coverage = .errors("coverage", test: nil, count: short, tolerated: tolerances["coverage"], basis:
                "the first to the last DATA tag (\(FixedPoint.string(span, places: 1)) s) spans the media (\(FixedPoint.string(media, places: 1)) s) "
                + "within \(FixedPoint.string(SourceReport.coverageSlack, places: 0)) s; \(report.dataTags) DATA tags for "
                + "\(FixedPoint.string(media / SourceReport.dataTagPeriod, places: 0)) expected (one every \(FixedPoint.string(SourceReport.dataTagPeriod, places: 0)) s)")
        } else {
            coverage = .notJudged("coverage", test: nil, because: report.mediaSeconds == nil ? "the media's duration is not known"
                                                                                               : "no DATA tag with a time")
        }
        let infoNeeded = (streams.values.map(\.span).max() ?? 0) >= SourceReport.infoInterval ? 1 : 0
        return [
            errors("read_errors", test: nil, "the source and its segments read"),
            .count("data_tag_count", test: 1, count: report.dataTags, minimum: dataNeeded,
                   basis: "DATA tags; at least one every 12 s of the segments' duration"),
            errors("tag_format", test: 2, "owner string of six fields, 271-byte ID3v2.4 tag, one PRIV frame, private data 'A'"),
            .notJudged("sequence_number", test: 3, because: keys),
            errors("time_gap", test: 4, "proxy: DATA tags of one stream more than 19 s apart (9 s past a 10 s tag)"),
            errors("tag_duration", test: 5, "proxy: DATA tags of one stream under 4 s or over 12 s apart"),
            .notJudged("cid_sid", test: 6, because: keys),
            .notJudged("cid_timestamp", test: 7, because: keys),
            errors("cid_ts_offset", test: 8, "a null CID with a non-zero offset (-55); the rest \(keys)"),
            errors("breakout", test: nil, "breakout code 0 (the Validator's summary reports the breakout type; the SDK's setting)"),
            .count("info_tag_count", test: 12, count: report.infoTags, minimum: infoNeeded,
                   basis: "INFO tags (both CIDs null, both offsets 0); one needed in a stream of 310 s or more"),
            errors("info_tag_interval", test: 13, "more than 310 s without an INFO tag; too soon is not judged (the period is Nielsen's)"),
            .notJudged("info_tag_cid", test: 14, because: "an INFO tag is known by these very fields without Nielsen's keys"),
            .notJudged("info_tag_offset", test: 15, because: "an INFO tag is known by these very fields without Nielsen's keys"),
            tagsPlacedOnAudio > 0
                ? errors("tag_placement", test: 22, "a tag more than 15 s from the PTS of the program's audio PES before it")
                : .notJudged("tag_placement", test: 22, because: isTransportStream ? "no audio stream in the program" : "MPEG-TS only"),
            errors("tag_time", test: 23, "proxy: a DATA tag's PC or FD offset moves more than 10 s from its PTS since the tag before"),
            .count("nielsen_owner_id", test: 25, count: report.nielsenTags, minimum: 1, basis: "tags owned by www.nielsen.com"),
            transportStream(errors("metadata_pes_pts", test: 26, "a PTS on every metadata PES")),
            errors("pes_incomplete_tag", test: 28, "timed-ID3 packets that do not decode whole"),
            transportStream(errors("pmt_descriptor", test: nil, "the PMT declares the timed-ID3 stream with its metadata descriptor")),
            transportStream(errors("one_tag_per_pes", test: nil, "one tag in each metadata PES")),
            hasEvents ? errors("emsg_value", test: nil, "emsg of Nielsen's scheme with value 1")
                      : .notJudged("emsg_value", test: nil, because: "fMP4 emsg only"),
            errors("duplicates", test: nil, "no payload twice"),
            errors("placeholder_run", test: nil, "placeholder PC CIDs for 20 s at most"),
            coverage,
        ]
    }

    private mutating func keep<T>(_ entry: @autoclosure () -> T, in list: WritableKeyPath<SourceReport, [T]>,
                                  _ key: SourceReport.CodingKeys) {
        let slot = Self.omittedSlot(key)
        if omittedCounts[slot] == 0, built[keyPath: list].count < listed {
            built[keyPath: list].append(entry())
        } else {
            omittedCounts[slot] += 1
        }
    }

    /// The lists that keep their first `keptFindings` entries; a list's place here is its slot in `omittedCounts`.
    private static let keptLists: [SourceReport.CodingKeys] = [
        .segmentsWithoutTags, .malformedPackets, .invalidTags, .placeholderTags, .duplicates, .discontinuities, .shortGaps, .longGaps,
        .timeGaps, .placeholderRuns, .lateInfoTags, .offsetErrors, .structure,
    ]

    private static func omittedSlot(_ key: SourceReport.CodingKeys) -> Int { keptLists.firstIndex(of: key) ?? keptLists.count - 1 }

    private static func finding(pts: Int64?, origin: TagOrigin, date: Date?, detail: String, check: String? = nil) -> Finding {
        Finding(pts: pts, time: pts.map(PTS.seconds), programDateTime: date.map(ProgramDateTime.format),
                segment: origin.segment?.uri, detail: detail, check: check)
    }
}
