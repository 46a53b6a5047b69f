import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The built `id3-meter` run as a child of its own, so that its peak memory is its own
/// (`wait4`'s rusage), not the test process's.
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
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0, errno == EINTR {}
        let exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Result(status: exitStatus,
                      stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "",
                      peakMiB: Double(usage.ru_maxrss) / 1024, seconds: Date().timeIntervalSince(started))
    }
}
