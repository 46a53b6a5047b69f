import CID3MeterShim
import Foundation
import Logging

/// Routes libav's log lines into swift-log. libav logs from any thread through a C
/// callback that cannot capture context, hence one process-wide logger. Its error lines are also
/// kept per thread, for the error the tool then reports in its own words (`AVError.detail`):
/// without `verbose`, they are not printed on their own, so one failure reads once.
public enum LibAVLog {
    nonisolated(unsafe) private static var logger = Logger(label: "libav")
    nonisolated(unsafe) private static var printsErrors = false

    private static let avLogError: Int32 = 16
    private static let avLogWarning: Int32 = 24
    private static let avLogVerbose: Int32 = 40
    private static let lastErrorKey = "id3-meter.libav.lastError"

    /// `verbose` prints libav's lines (informational ones too); otherwise its errors are only kept.
    public static func route(to logger: Logger, verbose: Bool) {
        Self.logger = logger
        printsErrors = verbose
        idm_set_log_handler({ level, line in
            guard let line else { return }
            let text = String(cString: line).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { return }
            if level <= LibAVLog.avLogError {
                // "[tls @ 0x7f...] An unexpected TLS packet was received." -> what after the context.
                let words = text.hasPrefix("[") ? text.drop { $0 != "]" }.dropFirst().trimmingCharacters(in: .whitespaces) : text
                Thread.current.threadDictionary[LibAVLog.lastErrorKey] = words
            }
            guard LibAVLog.printsErrors else { return }
            let swiftLevel: Logger.Level = level <= LibAVLog.avLogError ? .error : level <= LibAVLog.avLogWarning ? .warning : .debug
            LibAVLog.logger.log(level: swiftLevel, "libav: \(text)")
        }, verbose ? avLogVerbose : avLogError)
    }

    /// This thread's last libav error line since the last call, and forgets it.
    @discardableResult
    static func clearLastError() -> String? {
        let dictionary = Thread.current.threadDictionary
        defer { dictionary.removeObject(forKey: lastErrorKey) }
        return dictionary[lastErrorKey] as? String
    }
}
