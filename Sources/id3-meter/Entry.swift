import CID3MeterShim
import ID3MeterCommands

@main
enum Entry {
    static func main() async {
        // A service that runs for weeks: memory freed must go back to the system.
        idm_keep_large_blocks_mapped()
        await ID3MeterCommand.runAsMain()
    }
}
