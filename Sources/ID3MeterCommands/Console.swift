import Foundation
import Logging

/// The tool's own messages on stderr, in one format whoever writes them (the commands, the
/// engine's logger, libav with `--verbose`): the local time as the text records have it, the
/// level, then what happened, which names where ("12:04:31.250 error: in.m3u8: segment ...").
enum Console {
    static func line(_ level: Logger.Level, _ message: String) -> String {
        "\(clock.string(from: Date())) \(level == .warning ? "warning" : level.rawValue): \(message)"
    }

    static func error(_ message: String) { printError(line(.error, message)) }
    static func warning(_ message: String) { printError(line(.warning, message)) }

    private static let clock: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter
    }()
}

/// swift-log's handler for the process: every logger writes in `Console`'s format.
struct ConsoleLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        printError(Console.line(event.level, "\(event.message)"))
    }
}
