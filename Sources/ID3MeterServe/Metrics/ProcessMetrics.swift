#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Prometheus

/// The usual process series (CPU, memory, threads, open files), read from /proc at each scrape.
final class ProcessMetrics: Sendable {
    private let cpu: Gauge
    private let residentMemory: Gauge
    private let virtualMemory: Gauge
    private let threads: Gauge
    private let openFiles: Gauge
    private let startTime: Gauge

    init(registry: PrometheusCollectorRegistry) {
        cpu = registry.gauge("process_cpu_seconds", help: "User and system CPU time, in seconds.")
        residentMemory = registry.gauge("process_resident_memory_bytes", help: "Resident memory, in bytes.")
        virtualMemory = registry.gauge("process_virtual_memory_bytes", help: "Virtual memory, in bytes.")
        threads = registry.gauge("process_threads", help: "Threads of the process.")
        openFiles = registry.gauge("process_open_fds", help: "Open file descriptors.")
        startTime = registry.gauge("process_start_time_seconds", help: "Start of the process, in Unix seconds.")
        startTime.set(Date().timeIntervalSince1970 - ProcessInfo.processInfo.systemUptime + Self.startTicks() / Self.ticksPerSecond)
    }

    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
    private static let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))

    /// Fields of /proc/self/stat after the command name (field 3 is the first).
    private static func statFields() -> [Substring] {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return [] }
        return stat[stat.index(after: end)...].split(separator: " ")
    }

    private static func startTicks() -> Double {
        let fields = statFields()
        return fields.count > 19 ? Double(fields[19]) ?? 0 : 0
    }

    func refresh() {
        let fields = Self.statFields()
        // utime, stime, num_threads, vsize, rss: fields 14, 15, 20, 23, 24 of proc(5).
        guard fields.count > 21 else { return }
        cpu.set(((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / Self.ticksPerSecond)
        threads.set(Double(fields[17]) ?? 0)
        virtualMemory.set(Double(fields[20]) ?? 0)
        residentMemory.set((Double(fields[21]) ?? 0) * Self.pageSize)
        openFiles.set(Double((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0))
    }
}
