import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real small filesystem (tmpfs) of its own, mounted on a new temporary folder, that a test can
/// fill to the last byte and free again: ENOSPC as an operator meets it. Needs root (CI runs as
/// root); a machine that cannot mount says so in the failure.
final class SmallDisk {
    let folder: URL
    private var filler: URL { folder.appendingPathComponent("filler") }

    init(bytes: Int) throws {
        folder = try Samples.temporaryFolder()
        let mounted = try Command.runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", folder.path])
        guard mounted.status == 0 else { throw TestFailure("cannot mount a tmpfs on \(folder.path) (root needed): \(mounted.output)") }
    }

    /// Writes a file until the disk refuses another byte.
    func fill() {
        let descriptor = open(filler.path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        let block = [UInt8](repeating: 0, count: 4_096)
        while write(descriptor, block, block.count) > 0 {}
        let byte: [UInt8] = [0]
        while write(descriptor, byte, 1) > 0 {}
        close(descriptor)
    }

    func free() { unlink(filler.path) }

    deinit {
        _ = try? Command.runTool("/bin/umount", ["-l", folder.path])
        try? FileManager.default.removeItem(at: folder)
    }
}

extension Command {
    /// Runs a system tool to its end: its exit status and what it printed (both streams), for
    /// a failure to name.
    @discardableResult
    static func runTool(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: printed, as: UTF8.self))
    }
}
