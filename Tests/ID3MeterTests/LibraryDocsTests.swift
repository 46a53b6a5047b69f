import Foundation
import Testing
import ID3MeterCore

/// docs/LIBRARY.md's code is compiled (the package builds its blocks as two programs, in Swift 6
/// language mode) and the core one runs on real bytes.
@Suite("docs/LIBRARY.md compiles", .timeLimit(.minutes(4)))
struct LibraryDocsTests {
    @Test func theProgramsAreTheDocumentsBlocks() throws {
        let checked = try Command.runTool("/usr/bin/env", ["python3", Samples.root.appendingPathComponent("scripts/library-docs-examples.py").path,
                                                           "--check"])
        #expect(checked.status == 0, "run `make library-docs` after editing docs/LIBRARY.md: \(checked.output)")
    }

    /// A backend that depends on the package with `traits: []` (as LIBRARY.md says) gets only
    /// what the core needs: resolving a fresh consumer of `ID3MeterCore` fetches swift-log alone (and
    /// its binary links no ICU or libxml2), and one of `ID3Meter` with `traits: ["IO"]` none of
    /// `serve`'s packages.
    @Test(arguments: [("[]", "ID3MeterCore"), (#"["IO"]"#, "ID3Meter")])
    func aConsumerFetchesOnlyWhatItsTraitsNeed(traits: String, product: String) throws {
        let consumer = FileManager.default.temporaryDirectory.appendingPathComponent("id3-meter-consumer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: consumer) }
        try FileManager.default.createDirectory(at: consumer.appendingPathComponent("Sources/Consumer"), withIntermediateDirectories: true)
        // A path dependency's identity is its folder's name.
        let identity = Samples.root.standardized.lastPathComponent.lowercased()
        let manifest = """
            // swift-tools-version: 6.1
            import PackageDescription
            let package = Package(
                name: "Consumer", platforms: [.macOS(.v15)],
                dependencies: [.package(path: "\(Samples.root.path)", traits: \(traits))],
                targets: [.executableTarget(name: "Consumer", dependencies: [.product(name: "\(product)", package: "\(identity)")])]
            )
            """
        try manifest.write(to: consumer.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try "import \(product)\n".write(to: consumer.appendingPathComponent("Sources/Consumer/main.swift"), atomically: true, encoding: .utf8)
        let result = try Command.run(["swift", "package", "resolve"], in: consumer, binary: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(result.status == 0, "\(result.stderr)")
        let fetched = Set((try? FileManager.default.contentsOfDirectory(atPath: consumer.appendingPathComponent(".build/checkouts").path)) ?? [])
        if product == "ID3MeterCore" {
            #expect(fetched == ["swift-log"])
            // Built, it links no C library of ours or the system's, and of Foundation only its
            // essentials: no ICU (FoundationInternationalization), no libxml2 (FoundationXML).
            let built = try Command.run(["swift", "build"], in: consumer, binary: URL(fileURLWithPath: "/usr/bin/env"))
            #expect(built.status == 0, "\(built.stderr)")
            let elf = try Command.run(["-d", consumer.appendingPathComponent(".build/debug/Consumer").path],
                                      binary: URL(fileURLWithPath: "/usr/bin/readelf"))
            let needed = elf.stdout.matches(of: /\(NEEDED\).*\[(.+)\]/).map { String($0.output.1) }
            #expect(needed.contains("libFoundationEssentials.so"), "\(needed)")
            #expect(needed.allSatisfy { $0.hasPrefix("libswift") || $0 == "libFoundationEssentials.so" || Self.system.contains($0) }, "\(needed)")
        } else {
            #expect(fetched.isSuperset(of: ["async-http-client", "swift-nio"]), "\(fetched.sorted())")
            #expect(fetched.isDisjoint(with: ["hummingbird", "Yams", "swift-prometheus", "swift-argument-parser"]), "\(fetched.sorted())")
        }
    }

    /// The version LIBRARY.md's manifest asks for, when this clone has its tag (a clone without
    /// tags cannot resolve a version, and says so by skipping).
    static let tagged: Bool = {
        let tags = try? Command.run(["-C", Samples.root.path, "tag", "--list", ID3MeterVersion.current],
                                    binary: URL(fileURLWithPath: "/usr/bin/git"))
        return tags?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == ID3MeterVersion.current
    }()

    /// LIBRARY.md's Package.swift, its URL pointed at this repository, with the core block as its
    /// program: it resolves the version by its tag, fetches swift-log alone, builds, and reads the
    /// quirks sample's segments as the block says.
    @Test(.enabled(if: tagged, "this clone has no tag \(ID3MeterVersion.current): git fetch --tags"))
    func theDocumentedManifestResolvesBuildsAndRuns() throws {
        let document = try String(contentsOf: Samples.root.appendingPathComponent("docs/LIBRARY.md"), encoding: .utf8)
        let blocks = document.matches(of: /(?ms)^```swift\n(.*?)^```/).map { String($0.output.1) }
        let manifest = try #require(blocks.first { $0.hasPrefix("// swift-tools-version") })
        let program = try #require(blocks.first { $0.contains("import ID3MeterCore") })
        #expect(manifest.contains("from: \"\(ID3MeterVersion.current)\""), "the manifest asks for this version")
        let url = try #require(manifest.firstMatch(of: /\.package\(url: "([^"]+)"/)?.output.1)
        let consumer = FileManager.default.temporaryDirectory.appendingPathComponent("id3-meter-manifest-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: consumer) }
        // A folder named as the URL's last component, so that the identity is the documented one.
        let repository = consumer.appendingPathComponent("repositories/id3-meter.git")
        try FileManager.default.createDirectory(at: repository.deletingLastPathComponent(), withIntermediateDirectories: true)
        let clone = try Command.run(["clone", "--quiet", "--bare", Samples.root.path, repository.path], binary: URL(fileURLWithPath: "/usr/bin/git"))
        #expect(clone.status == 0, "\(clone.stderr)")
        let package = consumer.appendingPathComponent("package")
        try FileManager.default.createDirectory(at: package.appendingPathComponent("Sources/StoredSegments"), withIntermediateDirectories: true)
        try manifest.replacingOccurrences(of: String(url), with: repository.absoluteString)
            .write(to: package.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try program.write(to: package.appendingPathComponent("Sources/StoredSegments/main.swift"), atomically: true, encoding: .utf8)
        let built = try Command.run(["swift", "build"], in: package, binary: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(built.status == 0, "\(built.stderr)")
        let fetched = Set((try? FileManager.default.contentsOfDirectory(atPath: package.appendingPathComponent(".build/checkouts").path)) ?? [])
        #expect(fetched == ["id3-meter", "swift-log"], "\(fetched)")
        let resolved = try String(contentsOf: package.appendingPathComponent("Package.resolved"), encoding: .utf8)
        #expect(resolved.contains("\"version\" : \"\(ID3MeterVersion.current)\""), "\(resolved)")
        let run = try Command.run(["seg0.ts", "seg1.ts", "seg2.ts"].map { Samples.path("quirks/hls/\($0)") },
                                  binary: package.appendingPathComponent(".build/debug/StoredSegments"))
        #expect(run.stdout.split(separator: "\n").filter { $0.contains("www.nielsen.com/") }.count == 5, "\(run.stdout)\(run.stderr)")
    }

    /// What any Swift program on Linux links besides the Swift libraries.
    static let system: Set = ["libdispatch.so", "libBlocksRuntime.so", "libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2",
                              "ld-linux-aarch64.so.1", "libstdc++.so.6", "libgcc_s.so.1"]

    /// The core block, fed a TS recording in 64 KB pieces as a store would hand it over, prints
    /// each Nielsen tag with its PTS: those the generator planted.
    @Test func theCoreBlockReadsStoredSegments() throws {
        let program = Command.binary.deletingLastPathComponent().appendingPathComponent("library-docs-core")
        let result = try Command.run([Samples.path("spec/standard-60.ts")], binary: program)
        #expect(result.status == 0, "\(result.stderr)")
        let expected = try Samples.expected("spec/standard-60.expected.jsonl").filter(\.nielsen)
        let printed = result.stdout.split(separator: "\n").filter { $0.contains("www.nielsen.com/") }
        #expect(!expected.isEmpty && printed.count == expected.count, "\(result.stdout)")
        #expect(zip(printed, expected).allSatisfy { line, frame in line.hasPrefix("\(frame.pts) standard-60.ts \(frame.owner ?? "")") },
                "\(printed.prefix(2))")
    }

    /// The same block, given a stream's segments one by one (the quirks sample: a tag cut
    /// between seg0.ts and seg1.ts), joins the cut tag: every Nielsen tag the writer planted,
    /// each with the segment it began in, and nothing malformed.
    @Test func theCoreBlockJoinsATagCutBetweenStoredSegments() throws {
        let program = Command.binary.deletingLastPathComponent().appendingPathComponent("library-docs-core")
        let result = try Command.run(["seg0.ts", "seg1.ts", "seg2.ts"].map { Samples.path("quirks/hls/\($0)") }, binary: program)
        #expect(result.status == 0, "\(result.stderr)")
        let expected = try Samples.expected("quirks/hls/expected.jsonl").filter(\.nielsen)
        let printed = result.stdout.split(separator: "\n").filter { $0.contains("www.nielsen.com/") }
        #expect(expected.count == 5 && printed.count == expected.count, "\(result.stdout)")
        for (line, frame) in zip(printed, expected) {
            #expect(line.hasPrefix("\(frame.pts) \(frame.segment ?? "?") \(frame.owner ?? "")"), "\(line)")
        }
        #expect(!result.stdout.contains("bad ID3") && !result.stdout.contains("inside"), "\(result.stdout)")
        // Each segment alone (a program run per segment) breaks the cut tags: the sample has them.
        let alone = try ["seg0.ts", "seg1.ts", "seg2.ts"].map { try Command.run([Samples.path("quirks/hls/\($0)")], binary: program).stdout }
            .joined()
        #expect(alone.split(separator: "\n").filter { $0.contains("www.nielsen.com/") }.count < expected.count)
        #expect(alone.contains("bad ID3") && alone.contains("ends inside the timed-ID3 PES"), "\(alone)")
    }
}
