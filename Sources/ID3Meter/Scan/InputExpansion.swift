import Foundation

/// Turns what the user named into inputs to scan. A folder contributes its `*.ts` and
/// `*.m3u8` files, recursively, but each tag only once: playlists another playlist in the
/// folder refers to, and segments any playlist refers to, are read through that playlist.
public enum InputExpansion {
    public static func expand(_ arguments: [String], scanner: Scanner) -> (inputs: [String], failures: [InputFailure]) {
        var inputs: [String] = []
        var failures: [InputFailure] = []
        for argument in arguments {
            var isDirectory: ObjCBool = false
            if !Location.hasScheme(argument), FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory),
               isDirectory.boolValue {
                let found = folderInputs(argument, scanner: scanner)
                if found.isEmpty { failures.append(InputFailure(source: argument, reason: "no .ts or .m3u8 files in this folder")) }
                inputs += found
            } else {
                inputs.append(argument)
            }
        }
        return (inputs, failures)
    }

    private static func folderInputs(_ folder: String, scanner: Scanner) -> [String] {
        let root = URL(fileURLWithPath: folder)
        let files = (FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? [])
            .map { $0.standardizedFileURL.path }
            .filter { ["ts", "m3u8"].contains(($0 as NSString).pathExtension.lowercased()) }
            .sorted()
        var referenced = Set<String>()
        for playlist in files where Scanner.isPlaylist(playlist) {
            switch try? scanner.loadPlaylist(playlist) {
            case .master(let master):
                referenced.formUnion(master.variants.map(\.uri) + master.renditions.compactMap(\.uri))
            case .media(let media):
                referenced.formUnion(media.segments.map(\.uri))
            case nil:
                break  // scanned as an input, it reports its own error
            }
        }
        return files.filter { !referenced.contains($0) }
    }
}
