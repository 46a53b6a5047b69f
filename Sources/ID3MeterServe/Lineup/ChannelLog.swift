import Logging
import Synchronization

/// The log lines of a line-up's channels, held to a budget a minute: a thousand channels failing
/// at once would otherwise write thousands of lines a minute, burying the one that matters and
/// filling the node's disk. Lines past the budget are counted, and the count is said in one line
/// when the next minute's first line is written (and at the end). Audit lines (config changes)
/// do not pass through here: they are never held back.
final class ChannelLog: Sendable {
    let logger: Logger
    let linesPerMinute: Int
    private let clock = ContinuousClock()
    private let window: Mutex<Window>

    private struct Window {
        var start: ContinuousClock.Instant
        var written = 0
        var held = 0
    }

    init(logger: Logger, linesPerMinute: Int = 100) {
        self.logger = logger
        self.linesPerMinute = linesPerMinute
        window = Mutex(Window(start: clock.now))
    }

    func log(_ level: Logger.Level, _ message: @autoclosure () -> String) {
        guard logger.logLevel <= level else { return }
        let now = clock.now
        let (admitted, heldBefore): (Bool, Int) = window.withLock { window in
            var heldBefore = 0
            if now - window.start >= .seconds(60) {
                heldBefore = window.held
                window = Window(start: now)
            }
            guard window.written < linesPerMinute else {
                window.held += 1
                return (false, heldBefore)
            }
            window.written += 1
            return (true, heldBefore)
        }
        if heldBefore > 0 { sayHeld(heldBefore) }
        if admitted { logger.log(level: level, "\(message())") }
    }

    /// Says what the current minute held back: at the end of the line-up.
    func flush() {
        let held = window.withLock { window in
            defer { window.held = 0 }
            return window.held
        }
        if held > 0 { sayHeld(held) }
    }

    private func sayHeld(_ count: Int) {
        logger.warning("""
            \(count) channel log line\(count == 1 ? "" : "s") held back in the last minute (more than \(linesPerMinute) a minute); \
            GET /channels and the metrics have every channel's state
            """)
    }
}
