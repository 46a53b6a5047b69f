import ID3MeterCommands

@main
enum Entry {
    static func main() async { await ID3MeterCommand.runAsMain() }
}
