/// An extractor for bytes of any form: holds the first `MediaForm.sniffLength` bytes (or all
/// there are, if fewer), tells the form from them, then hands everything to that form's
/// extractor. Bytes of no known form are one failure.
public struct MediaExtractor: TagExtractor {
    private let origin: TagOrigin
    private let initSegment: [UInt8]?
    private let programs: ProgramSelection
    private var prefix: [UInt8] = []
    private var extractor: (any TagExtractor)?
    private var refused = false
    /// The form the first bytes showed; `nil` until then, and when they were of no known form.
    public private(set) var form: MediaForm?
    /// A tag was found, or, for MPEG-TS, a timed-ID3 stream declared.
    public private(set) var foundTimedID3 = false

    /// The MPEG-TS extractor it runs, when the input is MPEG-TS: a big file's later blocks are
    /// read by extractors of their own, and their end state carried on here.
    package var transportStream: TransportStreamExtractor? {
        get { extractor as? TransportStreamExtractor }
        set { if let newValue { extractor = newValue } }
    }

    /// An extractor for one input; `origin` names it in every event. `initSegment`: an fMP4
    /// segment's initialisation segment (its `EXT-X-MAP`), whose track timescales time
    /// version-0 `emsg` tags; without it they have no time, and a warning says so. `programs`:
    /// which programs of an MPEG-TS input are read.
    public init(origin: TagOrigin, initSegment: [UInt8]? = nil, programs: ProgramSelection = .all) {
        self.origin = origin
        self.initSegment = initSegment
        self.programs = programs
    }

    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, emit: (MediaEvent) -> Void) {
        guard !refused else { return }
        if extractor != nil { return pass(bytes, emit: emit) }
        prefix.append(contentsOf: bytes)
        if prefix.count >= MediaForm.sniffLength { start(emit: emit) }
    }

    public mutating func finish(emit: (MediaEvent) -> Void) {
        if extractor == nil, !refused { start(emit: emit) }
        guard var running = extractor else { return }
        var found = false
        running.finish { event in
            if case .tag = event { found = true }
            emit(event)
        }
        if found { foundTimedID3 = true }
        if let ts = running as? TransportStreamExtractor, ts.hasTimedID3Stream { foundTimedID3 = true }
        if !refused, !foundTimedID3, let form {
            emit(.warning(InputFailure(source: origin.source, .noTimedID3(form))))
        }
    }

    private mutating func start(emit: (MediaEvent) -> Void) {
        let held = prefix
        prefix = []
        guard !held.isEmpty else {
            refused = true
            return emit(.failure(InputFailure(source: origin.source, .empty)))
        }
        guard let form = MediaForm.sniff(held) else {
            refused = true
            return emit(.failure(InputFailure(source: origin.source, .unknownForm)))
        }
        self.form = form
        extractor = form.makeExtractor(origin: origin, initSegment: initSegment, programs: programs)
        held.withUnsafeBufferPointer { pass($0, emit: emit) }
    }

    private mutating func pass(_ bytes: UnsafeBufferPointer<UInt8>, emit: (MediaEvent) -> Void) {
        var found = false
        extractor!.feed(bytes) { event in
            if case .tag = event { found = true }
            emit(event)
        }
        if found { foundTimedID3 = true }
    }
}
