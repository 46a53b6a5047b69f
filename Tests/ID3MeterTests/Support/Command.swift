import Foundation

/// The built `id3-meter` executable, run as a user runs it.
enum Command {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("id3-meter")

    /// Starts the command; the caller reads the pipes and waits.
    static func launch(_ arguments: [String]) throws -> (process: Process, stdout: Pipe, stderr: Pipe) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return (process, out, err)
    }

    /// Runs the command to its end.
    static func run(_ arguments: [String]) throws -> Result {
        let (process, out, err) = try launch(arguments)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }
}
