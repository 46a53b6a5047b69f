import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The built `id3-meter` run as a child, its peak memory read from /proc while it runs (VmHWM of
/// its own address space: `wait4`'s ru_maxrss would also count the test process's memory, which
/// a spawned child shares until exec).
enum MeasuredRun {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Peak resident memory, MiB.
        var peakMiB: Double
        var seconds: Double
    }

    static func run(_ arguments: [String]) throws -> Result {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("stdout").path, err = folder.appendingPathComponent("stderr").path
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([Command.binary.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let started = Date()
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, Command.binary.path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
        var status: Int32 = 0
        var peakKiB = 0
        while true {
            peakKiB = max(peakKiB, highWaterMarkKiB(of: pid) ?? 0)
            let waited = waitpid(pid, &status, WNOHANG)
            if waited == pid || (waited < 0 && errno != EINTR) { break }
            usleep(5_000)
        }
        let exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Result(status: exitStatus,
                      stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "",
                      peakMiB: Double(peakKiB) / 1024, seconds: Date().timeIntervalSince(started))
    }

    /// VmHWM of a running process, in KiB.
    private static func highWaterMarkKiB(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }
}
