import ID3Meter
import Logging
import Synchronization

/// The channels being metered, by name. A channel whose config changes is ended and started
/// again; the others are left running, so reloading a config touches only what changed.
public final class Lineup: Sendable {
    private let channels = Mutex<[String: ChannelRun]>([:])
    private let fetcher: Fetcher
    private let output: LineupOutput
    private let logger: Logger

    public init(fetcher: Fetcher, output: LineupOutput, logger: Logger) {
        self.fetcher = fetcher
        self.output = output
        self.logger = logger
    }

    /// Makes the line-up `configs`: new channels start, changed ones restart, missing ones end.
    public func apply(_ configs: [ChannelConfig]) async {
        let wanted = Set(configs.map(\.name))
        let gone = channels.withLock { Array($0.keys) }.filter { !wanted.contains($0) }
        for name in gone { await remove(name) }
        for config in configs { await put(config) }
    }

    /// Adds a channel, or replaces the one of the same name when its config differs; `false`
    /// when an identical channel was already running.
    @discardableResult
    public func put(_ config: ChannelConfig) async -> Bool {
        let run = ChannelRun(config: config, fetcher: fetcher, output: output, logger: logger)
        let replaced: ChannelRun?? = channels.withLock { channels in
            let current = channels[config.name]
            if current?.config == config { return .none }
            channels[config.name] = run
            return .some(current)
        }
        guard case .some(let previous) = replaced else { return false }
        if let previous {
            await previous.stop()
            logger.notice("channel \(config.name): config changed, started again")
        }
        run.start()
        return true
    }

    /// Ends a channel (its engine's `end()` called, its last records written); `false` when
    /// there is none of that name.
    @discardableResult
    public func remove(_ name: String) async -> Bool {
        guard let run = channels.withLock({ $0.removeValue(forKey: name) }) else { return false }
        await run.stop()
        return true
    }

    public func removeAll() async {
        let all = channels.withLock { channels in
            defer { channels = [:] }
            return Array(channels.values)
        }
        await withTaskGroup(of: Void.self) { group in
            for run in all { group.addTask { await run.stop() } }
        }
    }

    /// Every channel's status, by name.
    public var statuses: [ChannelStatus] {
        channels.withLock { $0.values.map(\.status) }.sorted { $0.name < $1.name }
    }
}
