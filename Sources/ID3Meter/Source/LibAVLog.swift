import CID3MeterShim
import Foundation
import Logging
import Synchronization

/// libav's log lines, which it writes from any thread through a C callback that cannot capture
/// context: hence one process-wide setting. Until `route` is called, libav prints nothing (a
/// library must not write to its host's stderr); each thread's last error line is kept all the
/// same, for the error reported in its place (`FetchError.libav`'s detail), so that one failure reads once.
package enum LibAVLog {
    /// The logger, when libav's lines are printed; read by libav's threads, set by `route`.
    private static let destination = Mutex<Logger?>(nil)

    private static let avLogError: Int32 = 16
    private static let avLogWarning: Int32 = 24
    private static let avLogVerbose: Int32 = 40

    /// Prints libav's lines, informational ones too, through `logger`; `nil` prints none again
    /// (its errors are still kept for the failures they explain).
    public static func route(to logger: Logger?) {
        let verbose = logger != nil
        destination.withLock { $0 = logger }
        idm_set_log_handler({ level, line in
            guard let line, let logger = LibAVLog.destination.withLock({ $0 }) else { return }
            let text = String(cString: line).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { return }
            let swiftLevel: Logger.Level = level <= LibAVLog.avLogError ? .error : level <= LibAVLog.avLogWarning ? .warning : .debug
            logger.log(level: swiftLevel, "libav: \(text)")
        }, verbose ? avLogVerbose : avLogError)
    }

    /// Forgets this thread's last libav error line. Cheap: it is called before every read.
    static func clearLastError() {
        _ = idm_take_last_error(nil, 0)
    }

    /// This thread's last libav error line since it was cleared (what it says, after libav's
    /// "[tls @ 0x7f...]" context), and forgets it.
    static func takeLastError() -> String? {
        var buffer = [CChar](repeating: 0, count: 512)
        guard idm_take_last_error(&buffer, buffer.count) != 0 else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return text.hasPrefix("[") ? text.drop { $0 != "]" }.dropFirst().trimmingCharacters(in: .whitespaces) : text
    }
}
