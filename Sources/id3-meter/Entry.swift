import CID3MeterShim
import ID3MeterCommands

@main
enum Entry {
    static func main() async {
        // A service that runs for weeks: memory freed must go back to the system. Blocks in the
        // threads' caches never do, so serve runs without them (it costs serve no measurable CPU,
        // docs/PERFORMANCE.md); if it cannot restart, it runs with them.
        if CommandLine.arguments.dropFirst().first == "serve" {
            _ = idm_restart_without_thread_caches(CommandLine.unsafeArgv)
            ID3MeterCommand.runTasksOnEventLoops()
        }
        idm_keep_large_blocks_mapped()
        await ID3MeterCommand.runAsMain()
    }
}
