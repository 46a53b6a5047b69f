import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Turns what the user named into inputs to scan: files, URLs, `-` (a list of inputs on
/// standard input, one a line), quoted globs, and folders. A folder contributes its files of
/// `folderExtensions`, recursively, but each tag only once: playlists another playlist in the
/// folder refers to, and segments any playlist or MPD refers to, are read through it.
package enum InputExpansion {
    /// What a folder contributes: every extension id3-meter reads (MPEG-TS, playlists, MPDs, packed audio, fMP4).
    package static let folderExtensions = ["ts", "m3u8", "m3u", "mpd"] + MediaForm.allCases.flatMap(\.extensions).filter { $0 != "ts" }

    /// How many segments of one Representation a folder's MPD is taken to name (a hostile `r`
    /// must not make a folder scan enumerate billions).
    static let maximumSegmentsNamed = 100_000

    package static func expand(_ arguments: [String], scanner: TagScanner,
                              standardInput: () -> String = readStandardInput) async -> (inputs: [String], failures: [InputFailure]) {
        var inputs: [String] = []
        var failures: [InputFailure] = []
        for argument in arguments.flatMap({ $0 == "-" ? listedInputs(standardInput()) : [$0] }) {
            if !Location.hasScheme(argument), !FileManager.default.fileExists(atPath: argument),
               argument.contains(where: { "*?[".contains($0) }) {
                let matches = glob(argument)
                if matches.isEmpty { failures.append(InputFailure(source: argument, .noMatch)) }
                let expanded = await expand(matches, scanner: scanner, standardInput: standardInput)
                inputs += expanded.inputs
                failures += expanded.failures
                continue
            }
            var isDirectory: ObjCBool = false
            if !Location.hasScheme(argument), FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory),
               isDirectory.boolValue {
                let found = await folderInputs(argument, scanner: scanner)
                if found.isEmpty {
                    failures.append(InputFailure(source: argument, .nothingReadable(extensions: folderExtensions)))
                }
                inputs += found
            } else {
                inputs.append(argument)
            }
        }
        return (inputs, failures)
    }

    package static func readStandardInput() -> String {
        String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }

    /// One input a line; blank lines and `#` comments are skipped.
    private static func listedInputs(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    private static func glob(_ pattern: String) -> [String] {
        var result = glob_t()
        defer { globfree(&result) }
        guard Glibc.glob(pattern, 0, nil, &result) == 0 else { return [] }
        return (0..<Int(result.gl_pathc)).compactMap { result.gl_pathv[$0].map { String(cString: $0) } }
    }

    private static func folderInputs(_ folder: String, scanner: TagScanner) async -> [String] {
        let root = URL(fileURLWithPath: folder)
        let found = (FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? [])
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
            .map { $0.standardizedFileURL.path }
            .sorted()
        // Files named as what id3-meter reads; one of another name is taken when its first bytes
        // are a playlist's or an MPD's (`InputKind.of`, as for any input).
        var kinds: [String: InputKind] = [:]
        for file in found {
            if folderExtensions.contains(InputKind.nameExtension(of: file)) {
                kinds[file] = InputKind.hinted(by: file)
            } else if InputKind.hinted(by: file) == nil, case let kind = await InputKind.of(file, fetcher: scanner.fetcher), kind != .media {
                kinds[file] = kind
            }
        }
        let files = found.filter { kinds[$0] != nil }
        var referenced = Set<String>()
        for playlist in files where kinds[playlist] == .hlsPlaylist {
            switch try? await scanner.loader.load(playlist) {
            case .master(let master):
                // Variants carry the same tags; only the rendition read with the chosen one is covered.
                let rendition = scanner.variant.pick(from: master.variants).flatMap(master.audioRendition(for:))?.uri
                referenced.formUnion(master.variants.map(\.uri) + (rendition.map { [$0] } ?? []))
            case .media(let media):
                referenced.formUnion(media.segments.flatMap { [$0.uri] + ($0.mapURI.map { [$0] } ?? []) })
            case nil:
                break  // scanned as an input, it reports its own error
            }
        }
        for manifest in files where kinds[manifest] == .mpd {
            guard let mpd = try? await MPDLoader(fetcher: scanner.fetcher).load(manifest) else { continue }
            // Every Representation's segments: they are one presentation, read through the MPD.
            for period in mpd.periods {
                for representation in period.adaptationSets.flatMap(\.representations) {
                    let segments = SegmentEnumeration(representation: representation, periodDuration: period.duration)
                    referenced.formUnion(segments.prefix(maximumSegmentsNamed).map(\.uri) + [segments.initialization?.uri].compactMap { $0 })
                }
            }
        }
        return files.filter { !referenced.contains($0) }
    }
}
