/// An input, or one of its segments, that could not be read as it should: a value a caller
/// matches on (`kind`), put in words by `description` for a log or a report. Flag names are
/// not in the words: what a limit is called is the command line's business.
public struct InputFailure: Error, Sendable, CustomStringConvertible {
    /// The input as the user or caller named it.
    public var source: String
    /// The segment's URI, when the failure is one segment's.
    public var segment: String?
    public var kind: Kind

    public init(source: String, segment: String? = nil, _ kind: Kind) {
        self.source = source
        self.segment = segment
        self.kind = kind
    }

    /// What went wrong, with the value that says more.
    public enum Kind: Sendable, CustomStringConvertible {
        /// The input could not be opened or fetched.
        case cannotOpen(any Error & Sendable)
        /// It holds no bytes.
        case empty
        /// Its first bytes are of no form id3-meter reads.
        case unknownForm
        /// A stream libavformat reads that is not MPEG-TS.
        case notTransportStream
        /// Reading stopped on an error after `afterBytes` bytes (`nil`: not counted), what came
        /// before read. `silentFor`: a udp or srt stream, whose silence is reported as an error.
        case readFailed(afterBytes: Int64?, any Error & Sendable, silentFor: Double? = nil)
        /// Bytes of the stream lost or mangled.
        case damage(InputFailure.StreamDamage)
        /// Read, but without anything that could carry a tag in this form.
        case noTimedID3(MediaForm)
        /// Version-0 `emsg` tags that have no time: their fragment's start is unknown without the
        /// init segment's track timescale (`EXT-X-MAP`; `MediaExtractor(origin:initSegment:)`).
        case untimedEventMessages
        /// Segments of its playlist were read, none with anything that could carry a tag.
        case noSegmentHasTimedID3
        /// The playlist (or the variant's) could not be had.
        case playlist(any Error & Sendable)
        /// The audio rendition's playlist could not be had.
        case audioRendition(any Error & Sendable)
        /// A live playlist's reload failed; it is tried again.
        case reloadFailed(any Error & Sendable)
        /// The playlist (or MPD) loads again, after this many failed reloads in a row.
        case reloadRecovered(afterFailures: Int)
        /// Segments of a live playlist left its window before they could be fetched.
        case leftLiveWindow(ClosedRange<Int>)
        /// The media sequence went back (an encoder or origin restart).
        case mediaSequenceWentBack(from: Int, to: Int)
        /// The media sequence jumped further than the stream could have gone.
        case renumbered(from: Int, to: Int)
        case discontinuitySequenceWentBack(from: Int, to: Int)
        /// Its segments are sample-encrypted (`method`, under the key systems `keyFormats`):
        /// timed ID3 is carried in the clear and read without a key; no key is asked for.
        case sampleEncrypted(method: String, keyFormats: [String])
        /// What the playlist says of the segment that is wrong but readable.
        case segmentNote(String)
        /// The segment could not be had; the walk goes on with the next.
        case segmentSkipped(mediaSequence: Int, any Error & Sendable)
        /// A segment with more timed-ID3 events than are kept for one segment.
        case eventsDropped(kept: Int, dropped: Int)
        /// An HLS interstitial (its ID) whose assets could not be had, or only some: the primary
        /// goes on, as a player's does.
        case interstitialFailed(id: String, any Error & Sendable)
        /// Several programs of a transport stream carry timed ID3 (these program_numbers) and
        /// none was chosen: metered as one, they would credit two channels as one. Nothing is read.
        case severalPrograms([Int])
        /// Segments in a row could not be read; a live playlist is still followed.
        case lostInARow(Int)
        /// A playlist that cannot change was given up after `lostInARow` segments could not
        /// be read; `untried` more were listed after them.
        case gaveUp(playlist: String, lostInARow: Int, untried: Int)
        /// Asked to resume an input that is not an HLS playlist: read from its start.
        case notResumable
        /// A file pattern that matches nothing.
        case noMatch
        /// A folder with no file of these extensions.
        case nothingReadable(extensions: [String])
        /// Problems of one kind past the first few: how many, and the last of them.
        case heldBack(count: Int, last: String)
        /// Reading goes on from another copy of the variant's media playlist (another host or
        /// pathway), `to`, at the same media sequence; `onBackup` unless `to` is the copy to
        /// prefer (the master's first, or the steering server's).
        case switchedPath(from: String, to: String, onBackup: Bool, because: PathSwitch)
        /// The content-steering manifest could not be had or used; the pathway in use is kept.
        case steeringFailed(any Error & Sendable)
        /// A DASH Period whose content is elsewhere (`xlink:href`) and was not had: one to resolve
        /// when a player reaches it (`onRequest`, never followed), or one whose resolution failed
        /// (`failure`). `asWritten`: the MPD writes content in its place, which is played (as
        /// dash.js plays it); else its time passes without tags.
        case remotePeriod(String, failure: (any Error & Sendable)?, asWritten: Bool = false)
        /// A live (dynamic) MPD with no segment available: its time-shift buffer is empty (the
        /// presentation ended more than the buffer ago, or has not begun).
        case noSegmentAvailable
        /// Segments of a live MPD's time-shift buffer not read: a read takes the newest `read` at
        /// most, and looks back a bounded time.
        case bufferBeyondReach(ClosedRange<Int>, read: Int)
        /// The server's clock (a DASH `UTCTiming`) could not be had: this machine's is used.
        case serverClock(String)

        /// A kind that ends the reading of its input when nothing follows it: the input cannot be
        /// opened or read on, it is no form the meter reads, its playlist or MPD cannot be had, too
        /// many segments in a row were lost, or several programs carry tags and none was chosen.
        /// (A segment of a playlist may fail with one of these and the walk go on: then it was
        /// not the end, and it is an event like any other.)
        public var endsReading: Bool {
            switch self {
            case .cannotOpen, .empty, .unknownForm, .notTransportStream, .readFailed, .playlist, .gaveUp, .severalPrograms: true
            default: false
            }
        }

        /// The error value underneath, when there is one.
        public var cause: (any Error & Sendable)? {
            switch self {
            case .cannotOpen(let error), .readFailed(_, let error, _), .playlist(let error), .audioRendition(let error),
                 .reloadFailed(let error), .segmentSkipped(_, let error), .steeringFailed(let error), .interstitialFailed(_, let error):
                error
            case .switchedPath(_, _, _, .reloadsFailed(let error)), .switchedPath(_, _, _, .segmentsLost(_, let error)): error
            case .damage(let damage): damage
            default: nil
            }
        }

        public var description: String {
            switch self {
            case .cannotOpen(let error): "cannot open: \(error)"
            case .empty: "cannot read: it is empty"
            case .unknownForm:
                "cannot read: not MPEG-TS (no sync byte every 188 bytes), packed audio, fragmented MP4 or an HLS playlist"
            case .notTransportStream: "cannot read: not MPEG-TS (no sync byte every 188 bytes)"
            case .readFailed(let bytes, let error, let silence):
                "read error" + (bytes.map { " after \($0) bytes" } ?? "") + ": \(error)" + (silence.map { " (no data for \($0) s)" } ?? "")
            case .damage(let damage): damage.description
            case .noTimedID3(let form): form.noTagReason
            case .untimedEventMessages:
                "version-0 emsg tags without a time: the fragment's start is unknown without the init segment's timescale (EXT-X-MAP)"
            case .noSegmentHasTimedID3: "none of its segments has \(MediaForm.noTimedID3.dropFirst(3))"
            case .playlist(let error): "\(error)"
            case .remotePeriod(let reference, let failure?, let asWritten):
                "a Period's content at \(reference) (xlink:href) could not be had (\(failure)); "
                    + (asWritten ? "the content the MPD writes in its place is played" : "its time passes without tags")
            case .remotePeriod(let reference, nil, let asWritten):
                "a Period's content is at \(reference) (xlink:href, to be resolved on request): not followed; "
                    + (asWritten ? "the content the MPD writes in its place is played" : "its time passes without tags")
            case .noSegmentAvailable:
                "the live MPD has no segment available now (its time-shift buffer is empty: the presentation ended, or has not begun)"
            case .bufferBeyondReach(let numbers, let read):
                "segments \(numbers.lowerBound)...\(numbers.upperBound) of the live MPD's time-shift buffer are not read (at most the newest \(read) are)"
            case .serverClock(let reason): "the server's clock could not be had (\(reason)); this machine's clock decides which segments exist"
            case .audioRendition(let error): "audio rendition: \(error)"
            case .reloadFailed(let error): "playlist reload failed, retrying: \(error)"
            case .reloadRecovered(let failures): "the playlist loads again, after \(failures) failed reload\(failures == 1 ? "" : "s")"
            case .leftLiveWindow(let sequences):
                "segments \(sequences.lowerBound)...\(sequences.upperBound) left the live window before they could be fetched"
            case .mediaSequenceWentBack(let from, let to):
                "the media sequence went back from \(from) to \(to) (an encoder or origin restart?): reading on from segment \(to); "
                    + "a tag already delivered is not delivered again"
            case .renumbered(let from, let to):
                "the media sequence jumped from \(from) further than the stream could have gone, or to segments already read: "
                    + "renumbered, nothing taken as lost; reading on from segment \(to)"
            case .discontinuitySequenceWentBack(let from, let to): "EXT-X-DISCONTINUITY-SEQUENCE went back from \(from) to \(to)"
            case .sampleEncrypted(let method, let formats):
                "segments sample-encrypted (METHOD=\(method), KEYFORMAT \(formats.joined(separator: ", "))): "
                    + "their tags are read in the clear, no key is fetched"
            case .segmentNote(let note): note
            case .segmentSkipped(let sequence, let error): "media sequence \(sequence) skipped: \(error)"
            case .eventsDropped(let kept, let dropped):
                "more than \(kept) timed-ID3 events in one segment; the \(dropped) after them were dropped"
            case .interstitialFailed(let id, let error): "interstitial \(id): \(error); the primary content goes on"
            case .severalPrograms(let programs):
                "programs \(programs.map(String.init).joined(separator: ", ")) each carry timed ID3 (a multi-program stream): "
                    + "choose the one to meter; none is read"
            case .lostInARow(let lost): "\(lost) segments in a row could not be read; still following the playlist"
            case .gaveUp(let playlist, let lost, let untried):
                "gave up on \(playlist) after \(lost) segments in a row could not be read; \(untried) more not tried"
            case .notResumable: "only an HLS playlist can be resumed; read from its start"
            case .noMatch: "no file matches this pattern"
            case .nothingReadable(let extensions): "no file id3-meter reads in this folder (.\(extensions.joined(separator: ", .")))"
            case .heldBack(let count, let last): "\(count) more like this (not listed): \(last)"
            case .steeringFailed(let error): "content steering: \(error); staying on the pathway in use, asking again later"
            case .switchedPath(let from, let to, let onBackup, let reason):
                "\(reason) from \(from); reading on from the \(onBackup ? "redundant" : "preferred") copy at \(to)"
            }
        }
    }

    /// Why a stream went on from another copy of its playlist.
    public enum PathSwitch: Sendable, CustomStringConvertible {
        /// Its playlist could not be loaded (at the start, or twice in a row after), the last time with this error.
        case reloadsFailed(any Error & Sendable)
        /// This many segments in a row could not be read, the last with this error.
        case segmentsLost(Int, any Error & Sendable)
        /// The content-steering server put this pathway first.
        case steered(pathway: String)

        public var description: String {
            switch self {
            case .reloadsFailed(let error): "its playlist could not be loaded (\(error))"
            case .segmentsLost(let lost, let error): "\(lost) segments in a row could not be read (\(error))"
            case .steered(let pathway): "the steering server put pathway \(pathway) first"
            }
        }
    }

    /// The error value underneath, when there is one.
    public var cause: (any Error & Sendable)? { kind.cause }

    public var description: String {
        segment.map { "\(source): segment \($0): \(kind)" } ?? "\(source): \(kind)"
    }
}
