import CID3MeterShim
import Foundation
import Logging

/// Routes libav's log lines into swift-log. libav logs from any thread through a C
/// callback that cannot capture context, hence one process-wide logger.
public enum LibAVLog {
    nonisolated(unsafe) private static var logger = Logger(label: "libav")

    private static let avLogError: Int32 = 16
    private static let avLogWarning: Int32 = 24
    private static let avLogVerbose: Int32 = 40

    /// `verbose` passes libav's informational lines too; otherwise only its errors.
    public static func route(to logger: Logger, verbose: Bool) {
        Self.logger = logger
        idm_set_log_handler({ level, line in
            guard let line else { return }
            let text = String(cString: line).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { return }
            let swiftLevel: Logger.Level = level <= LibAVLog.avLogError ? .error : level <= LibAVLog.avLogWarning ? .warning : .debug
            LibAVLog.logger.log(level: swiftLevel, "\(text)")
        }, verbose ? avLogVerbose : avLogError)
    }
}
