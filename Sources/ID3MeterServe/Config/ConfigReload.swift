import ID3Meter
import Logging
import ServiceLifecycle
import UnixSignals

/// Reads the line-up's config file again at each SIGHUP and applies what changed; a config that
/// cannot be read leaves the running line-up as it is, and the log says why.
public struct ConfigReload: Service {
    public var path: String
    public var lineup: Lineup
    /// The share of the line-up this instance meters.
    public var shard: Shard?
    public var logger: Logger

    public init(path: String, lineup: Lineup, shard: Shard?, logger: Logger) {
        self.path = path
        self.lineup = lineup
        self.shard = shard
        self.logger = logger
    }

    public func run() async {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            do throws(ConfigError) {
                let changed = try LineupConfig.load(path)
                await lineup.apply(changed.held(by: shard))
                await lineup.audit("reload", channel: nil, by: "SIGHUP", old: nil, new: path)
                logger.notice("SIGHUP: \(path) read again, \(changed.channels.count) channels")
            } catch {
                logger.error("SIGHUP: \(error); the line-up is unchanged")
            }
        }
    }
}
