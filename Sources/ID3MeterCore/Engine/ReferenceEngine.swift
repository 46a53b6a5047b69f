import FoundationEssentials
import Logging

/// A reference DTVR metering engine with the App SDK's behaviour: app info validated at
/// start, the state table followed call by call, only Nielsen tags accepted, no tag delivered
/// twice, and every delivery and event written to its outputs.
public actor ReferenceEngine: MeteringEngine {
    package private(set) var state: EngineState = .initial
    public private(set) var channelName: String?
    public private(set) var metadata: [String: String] = [:]
    /// Tags passed to the outputs, and tags turned away as duplicates or not Nielsen's.
    public private(set) var delivered = 0
    /// Tags not delivered: not Nielsen, or already delivered (`DuplicateFilter`).
    public private(set) var suppressed = 0

    private let outputs: [any MeterOutput]
    private var duplicates = DuplicateFilter()
    private let logger: Logger
    private let now: @Sendable () -> Date

    /// An engine that writes to `outputs`; app info with an empty required value disables it, the
    /// error written as an event record, as the SDK reports it to its delegate. `now` stamps the
    /// records (tests inject it).
    public init(appInfo: ReferenceEngine.AppInfo, outputs: [any MeterOutput],
                logger: Logger = Logger(label: "id3-meter.engine"), now: @escaping @Sendable () -> Date = Date.init) async {
        self.outputs = outputs
        self.logger = logger
        self.now = now
        let errors = appInfo.errors
        for error in errors { await report(error) }
        state = errors.isEmpty ? .idle : .disabled
        if errors.isEmpty { await report(.startup) }
    }

    public func play(channelName: String) {
        guard transition(.play) else { return }
        self.channelName = channelName.isEmpty ? "defaultChannelName" : channelName
    }

    public func loadMetadata(_ json: String) async {
        guard state.after(.loadMetadata) != nil else { return ignore(.loadMetadata) }
        guard let strings = try? JSONDecoder().decode([String: String].self, from: Data(json.utf8)) else {
            return await report(.error(.exception, "metadata is not a JSON object of string values: \(json)"))
        }
        guard strings["type"] == "content", ["1", "2"].contains(strings["adModel"]) else {
            return await report(.error(.emptyValue, #"DTVR metadata needs "type":"content" and "adModel":"1" or "2""#))
        }
        metadata = strings
        _ = transition(.loadMetadata)
    }

    public func sendID3(_ payload: String, context: TagContext) async {
        guard transition(.sendID3) else { return }
        guard payload.hasPrefix(NielsenTag.ownerPrefix) else {
            suppressed += 1
            return logger.debug("sendID3: not a Nielsen tag, filtered out", metadata: ["payload": "\(payload.prefix(40))"])
        }
        guard duplicates.admit(payload: payload, pts: context.pts) else {
            suppressed += 1
            return logger.debug("sendID3: duplicate tag suppressed", metadata: ["pts": "\(context.pts.map(String.init) ?? "none")"])
        }
        delivered += 1
        let record = MeterRecord.delivery(payload, context: context, at: now())
        for output in outputs { await output.write(record) }
    }

    public func playheadPosition(_ position: Int64) {
        _ = transition(.playheadPosition)
    }

    public func stop() {
        _ = transition(.stop)
    }

    public func end() async {
        guard transition(.end) else { return }
        await report(.shutdown)
    }

    /// `appDisableApi`: a disabled engine ignores every call until enabled again.
    public func appDisableApi(_ disabled: Bool) {
        _ = transition(disabled ? .disable : .enable)
    }

    private func transition(_ call: EngineCall) -> Bool {
        guard let next = state.after(call) else {
            ignore(call)
            return false
        }
        state = next
        return true
    }

    private func ignore(_ call: EngineCall) {
        logger.notice("\(call) ignored in state \(state.rawValue)")
    }

    private func report(_ event: EngineEvent) async {
        let record = MeterRecord.event(event, at: now())
        for output in outputs { await output.write(record) }
    }
}
