import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// Streams from someone else's server, made hostile on purpose by a real local one: references
/// to local files and sockets, endless and trickling bodies, lying headers, floods of damage.
@Suite("Hostile streams", .timeLimit(.minutes(3)))
struct HostileStreamTests {
    /// A local TS file with tags of its own: no remote playlist may make us read it.
    static let planted = Samples.path("ts/nielsen.ts")

    static func payloads(_ events: [MediaEvent]) -> Set<String> {
        Set(events.tags.flatMap(\.nielsenTags).map(\.payload))
    }

    static func plantedPayloads() async -> Set<String> { payloads(await Samples.scan(planted)) }
    static func legitPayloads() async -> Set<String> { payloads(await Samples.scan(Samples.path("spec/hls/index.m3u8"))) }

    /// Every form of reference the issue lists, and a plain absolute path (which a remote playlist resolves on its server).
    static func references(port: UInt16) -> [String] {
        ["file://\(planted)", "file:\(planted)", "FILE://\(planted)", "concat:\(planted)|\(planted)",
         "subfile:,,start,0,end,0,,:\(planted)", "cache:file:\(planted)", "async:file:\(planted)", "pipe:0",
         "data:application/octet-stream;base64,R0lGODlh", "tcp://127.0.0.1:\(port)?listen=1",
         "udp://127.0.0.1:\(port)?localport=\(port)", "http:\(planted)"]
    }

    /// Playlists that put `reference` where a segment, key, map, variant and rendition go.
    static func playlists(_ reference: String) -> [String: String] {
        let media = { (tag: String, uri: String) in
            "#EXTM3U\n#EXT-X-TARGETDURATION:10\n\(tag)#EXTINF:10,\nspec/hls/part0.ts\n#EXTINF:10,\n\(uri)\n#EXTINF:10,\nspec/hls/part1.ts\n#EXT-X-ENDLIST\n"
        }
        return [
            "segment.m3u8": media("", reference),
            "key.m3u8": media("", "enc.ts").replacingOccurrences(of: "#EXTINF:10,\nenc.ts", with:
                "#EXT-X-KEY:METHOD=AES-128,URI=\"\(reference)\"\n#EXTINF:10,\nenc.ts"),
            "map.m3u8": media("#EXT-X-MAP:URI=\"\(reference)\"\n", "fmp4/seg0.m4s"),
            "master.m3u8": "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n\(reference)\n",
            "rendition.m3u8": "#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"x\",DEFAULT=YES,URI=\"\(reference)\"\n"
                + "#EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO=\"a\"\nspec/hls/index.m3u8\n",
        ]
    }

    @Test func aRemotePlaylistCannotReachLocalFilesOrSockets() async throws {
        let planted = await Self.plantedPayloads(), legit = await Self.legitPayloads()
        #expect(!planted.isEmpty && planted.isDisjoint(with: legit))
        let port = UInt16.random(in: 40_000...60_000)
        for reference in Self.references(port: port) {
            let playlists = Self.playlists(reference)
            let server = try LocalHTTPServer { request in
                if let text = playlists[request.path] { return LocalHTTPServer.Response(body: Array(text.utf8)) }
                if request.path == "redirect.ts" { return LocalHTTPServer.Response(status: 302, headers: ["Location": reference]) }
                return .file(request.path, in: Samples.folder)
            }
            defer { server.stop() }
            for name in playlists.keys.sorted() + ["redirect.ts"] {
                let started = Date()
                let url = server.url(name)
                let events = await Samples.scan(url, fetcher: Fetcher(ioTimeout: .seconds(2), retry: .none))
                let context = Comment(rawValue: "\(reference) as \(name)")
                #expect(Date().timeIntervalSince(started) < 8, context)
                #expect(Self.payloads(events).isDisjoint(with: planted), context)
                #expect(!events.failures.isEmpty, context)
                let text = events.failures.map(\.description).joined(separator: "\n")
                #expect(!text.contains("bytes,") && !text.contains("Is a directory"), "nothing about local files: \(text)")
                if name != "redirect.ts", !reference.hasPrefix("http:") {
                    #expect(text.contains("refused '\(reference)'"), "\(context): \(text)")
                }
                if name == "segment.m3u8" {
                    #expect(Self.payloads(events).isSuperset(of: Self.payloads(await Samples.scan(Samples.path("spec/hls/part0.ts")))),
                            "the segments around the refused one are still read")
                }
            }
        }
    }

    @Test func aLocalPlaylistMayReadLocalFilesButNoOtherProtocol() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let playlist = folder.appendingPathComponent("local.m3u8").path
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n\(Self.planted)\n#EXTINF:10,\npipe:0\n#EXTINF:10,\nfile://\(Self.planted)\n#EXT-X-ENDLIST\n"
        try text.write(toFile: playlist, atomically: true, encoding: .utf8)
        let events = await Samples.scan(playlist)
        #expect(Self.payloads(events) == (await Self.plantedPayloads()))
        #expect(events.failures.contains {
            if case .segmentSkipped(_, SegmentLoadError.refused(let reference, _, .segment)) = $0.kind { reference == "pipe:0" } else { false }
        }, "\(events.failures)")
    }

    @Test func theCommandLineSaysWhichReferenceItRefusedAndWhy() async throws {
        let playlists = Self.playlists("file://\(Self.planted)")
        let server = try LocalHTTPServer { request in
            playlists[request.path].map { LocalHTTPServer.Response(body: Array($0.utf8)) } ?? .file(request.path, in: Samples.folder)
        }
        defer { server.stop() }
        let result = try await offThePool { try Command.run(["scan", "--format", "jsonl", server.url("segment.m3u8")]) }
        #expect(result.status == 1)
        #expect(result.stderr.contains("refused 'file://\(Self.planted)': a playlist loaded over http(s) may reference only http(s) URLs"),
                "\(result.stderr)")
        let planted = await Self.plantedPayloads()
        #expect(!planted.isEmpty && planted.allSatisfy { !result.stdout.contains($0) })
        #expect(result.stdout.contains("\"type\":\"nielsen\""))
    }

    // MARK: Limits

    /// TS null packets, as much as the client takes.
    static let endlessPackets: @Sendable (([UInt8]) -> Bool) -> Void = { send in
        let block = (0..<2_000).flatMap { _ in [0x47, 0x1F, 0xFF, 0x10] + [UInt8](repeating: 0xFF, count: 184) }
        while send(block) {}
    }

    static func limitServer() throws -> LocalHTTPServer {
        let part0 = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Samples.path("spec/hls/part0.ts"))))
        return try LocalHTTPServer { request in
            let media = { (uri: String) in
                LocalHTTPServer.Response(body: Array("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\n\(uri)\n#EXT-X-ENDLIST\n".utf8))
            }
            switch request.path {
            case "endless.m3u8": return media("endless.ts")
            case "endless.ts": return LocalHTTPServer.Response(body: part0, length: .none, more: endlessPackets)
            case "claims.m3u8": return media("claims.ts")
            case "claims.ts": return LocalHTTPServer.Response(body: part0, length: .claimed(1 << 30))
            case "trickle.m3u8": return media("trickle.ts")
            case "trickle.ts":
                return LocalHTTPServer.Response(body: Array(part0.prefix(188)), length: .none) { send in
                    for byte in part0.dropFirst(188) {
                        Thread.sleep(forTimeInterval: 1)
                        guard send([byte]) else { return }
                    }
                }
            case "playlist.m3u8":
                return LocalHTTPServer.Response(body: Array("#EXTM3U\n".utf8), length: .none) { send in
                    let lines = [UInt8](String(repeating: "# padding that never ends\n", count: 40_000).utf8)
                    while send(lines) {}
                }
            default: return .notFound
            }
        }
    }

    @Test func anEndlessSegmentIsCutAtItsLimitWithItsTagsKeptAndMemoryFlat() async throws {
        let server = try Self.limitServer()
        defer { server.stop() }
        let result = try await offThePool { try MeasuredRun.run(["scan", "--format", "jsonl", server.url("endless.m3u8")]) }
        #expect(result.status == 1)
        #expect(result.stderr.contains("more than the 256 MB allowed for a segment (--max-segment-size)"), "\(result.stderr)")
        let part0 = Self.payloads(await Samples.scan(Samples.path("spec/hls/part0.ts")))
        #expect(!part0.isEmpty && part0.allSatisfy { result.stdout.contains($0) }, "the tags before the cut are reported")
        #expect(result.peakMiB < 150, "peak \(result.peakMiB) MiB")
    }

    @Test func anEndlessPlaylistIsCutAtItsLimit() async throws {
        let server = try Self.limitServer()
        defer { server.stop() }
        let result = try await offThePool { try MeasuredRun.run(["scan", "--max-playlist-size", "4M", server.url("playlist.m3u8")]) }
        #expect(result.status == 1)
        #expect(result.stderr.contains("more than the 4 MB allowed for a playlist (--max-playlist-size)"), "\(result.stderr)")
        #expect(result.peakMiB < 150, "peak \(result.peakMiB) MiB")
    }

    @Test func aClaimedGigabyteIsRefusedBeforeReadingNotAllocated() async throws {
        let server = try Self.limitServer()
        defer { server.stop() }
        let result = try await offThePool { try MeasuredRun.run(["scan", "--max-segment-size", "64M", server.url("claims.m3u8")]) }
        #expect(result.status == 1)
        // The library's words, then the flag that sets the limit (the command line's).
        #expect(result.stderr.contains("declares 1073741824 bytes, more than the 64 MB allowed for a segment (--max-segment-size)"), "\(result.stderr)")
        #expect(result.peakMiB < 150 && result.seconds < 10)
    }

    /// Keys and init sections go through the same fetch, each with its own limit.
    @Test(arguments: [(Fetcher.Limits.Resource.key, 64 << 10), (.initSection, 16 << 20)])
    func anEndlessKeyOrInitSectionIsCutAtItsLimit(resource: Fetcher.Limits.Resource, limit: Int) async throws {
        let server = try Self.limitServer()
        defer { server.stop() }
        let url = server.url("endless.ts")
        let result: Result<[UInt8], FetchFailure>
        do { result = .success(try await Fetcher(retry: .none).fetch(url, as: resource)) } catch { result = .failure(error) }
        guard case .failure(let failure) = result else { Issue.record("an endless body was read whole"); return }
        #expect(failure.error == .tooLarge(resource, limit: limit, declared: nil), "\(failure)")
    }

    @Test func aTricklingServerIsCutByTheFetchDeadline() async throws {
        let server = try Self.limitServer()
        defer { server.stop() }
        for command in [["scan"], ["--speed", "max"]] {
            let result = try await offThePool { try MeasuredRun.run(command + ["--fetch-deadline", "2", "--timeout", "5", server.url("trickle.m3u8")]) }
            #expect(result.status == 1)
            #expect(result.stderr.contains("not complete after 2 s, its deadline (--fetch-deadline)"), "\(result.stderr)")
            #expect(result.seconds < 6, "\(result.seconds) s")
        }
    }

    @Test func theDefaultDeadlineIsThreeTargetDurationsAndNeverUnderTenSeconds() {
        let limits = Fetcher.Limits()
        #expect(limits.deadline(for: .segment, targetDuration: 6) == 18)
        #expect(limits.deadline(for: .segment, targetDuration: 2) == 10)
        #expect(limits.deadline(for: .playlist, targetDuration: nil) == 10)
        #expect(limits.deadline(for: .input, targetDuration: 6) == nil, "what the user names is read as it comes")
    }

    @Test func aPlaylistOfSegmentsThatAllFailIsGivenUpAfterTenInARow() async throws {
        let server = try LocalHTTPServer { request in
            guard request.path == "many.m3u8" else { return .notFound }
            let lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:1"] + (0..<100_000).flatMap { ["#EXTINF:1,", "s\($0).ts"] } + ["#EXT-X-ENDLIST"]
            return LocalHTTPServer.Response(body: Array(lines.joined(separator: "\n").utf8))
        }
        defer { server.stop() }
        let url = server.url("many.m3u8")
        let events = await Samples.scan(url)
        #expect(events.failures.count == 11)
        guard case .gaveUp(let playlist, let lost, let untried) = events.failures.last?.kind else { Issue.record("\(events.failures)"); return }
        #expect(playlist == url && lost == 10 && untried == 100_000 - 10)
        #expect(server.requests.count == 1 + 10 * Samples.quickRetry.attempts)
    }

    // MARK: Floods of damage

    /// About `megabytes` of MPEG-TS in which every timed-ID3 PES is damaged, from `scripts/damaged_ts.py`.
    static func damagedTransportStream(megabytes: Int) throws -> URL {
        let file = try Samples.temporaryFolder().appendingPathComponent("damaged.ts")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Samples.root.appendingPathComponent("scripts/damaged_ts.py").path, String(megabytes)]
        process.standardOutput = try FileHandle(forWritingTo: file)
        try process.run()
        Command.watch(process)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return file
    }

    @Test func aStreamFullOfDamageKeepsMemoryFlatAndPrintsEachKindOnce() async throws {
        let file = try await offThePool { try Self.damagedTransportStream(megabytes: 40) }
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        for command in [["scan", "--report", "-"], ["--speed", "max"]] {
            let result = try await offThePool { try MeasuredRun.run(command + [file.path]) }
            let context = Comment(rawValue: command.joined(separator: " "))
            #expect(result.status == 1, context)
            // 40 MB of damage: kept reports would add about 50 MB (1.25 bytes a byte, as measured before).
            #expect(result.peakMiB < 100, "\(context): peak \(result.peakMiB) MiB")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count < 40, "\(context): \(lines.count) lines on stderr: \(lines.prefix(50).joined(separator: "\n"))")
            #expect(result.stderr.contains("more like this (not listed): "), "\(context): \(result.stderr)")
            #expect(Set(lines).count == lines.count || command[0] != "scan", "\(context): a line printed twice")
        }
    }

    // MARK: Values

    @Test(arguments: ["inf", "1e-300", "-30", "nan"])
    func anOutOfRangeFrameRateFallsBackWithAWarning(rate: String) async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let master = folder.appendingPathComponent("master.m3u8").path
        try "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,FRAME-RATE=\(rate)\n\(Samples.path("hls/low/low.m3u8"))\n"
            .write(toFile: master, atomically: true, encoding: .utf8)
        let result = try await offThePool { try Command.run(["--speed", "max", "--format", "jsonl", master]) }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("the declared frame rate \(Double(rate)!) is not from 1 to 300 fps; not used"), "\(result.stderr)")
        #expect(result.sends.map(\.payload) == (try Samples.expected("hls/expected.jsonl")).filter(\.nielsen).map(\.owner))
    }

    @Test(arguments: [
        (["--duration", "nan"], "--duration must be a finite number"), (["--duration", "inf"], "--duration must be a finite number"),
        (["--duration", "1e300"], "--duration must be from 0.001 to 315360000 seconds, not 1e+300"),
        (["--timeout", "inf"], "--timeout must be a finite number"), (["--timeout", "-1"], "--timeout must be positive"),
        (["--fps", "inf"], "--fps must be a finite number from 1 to 300"), (["--fps", "1e-300", "--speed", "max"], "--fps must be from 1 to 300"),
        (["--speed", "0"], "--speed must be positive"), (["--live-start", "-5"], "--live-start must be from 1 to 1000, not -5"),
        (["--max-segment-size", "99999999999G"], "--max-segment-size"), (["--fetch-deadline", "-2"], "--fetch-deadline must be positive"),
    ])
    func aBadNumberIsAUsageErrorThatGivesTheRange(arguments: [String], message: String) async throws {
        let result = try await offThePool { try Command.run(arguments + [Samples.path("hls/master.m3u8")]) }
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func aYearLongSegmentIsTakenAsTheTargetDurationWithAWarning() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let playlist = folder.appendingPathComponent("index.m3u8").path
        let text = try String(contentsOfFile: Samples.path("spec/hls/index.m3u8"), encoding: .utf8)
            .replacingOccurrences(of: "#EXTINF:10.000,\npart1.ts", with: "#EXTINF:31536000,\n\(Samples.path("spec/hls/part1.ts"))")
            .replacingOccurrences(of: "\npart", with: "\n\(Samples.path("spec/hls/part"))")
        try text.write(toFile: playlist, atomically: true, encoding: .utf8)
        let result = try await offThePool { try MeasuredRun.run(["--speed", "max", "--format", "jsonl", playlist]) }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("EXTINF 31536000.0 s is far over EXT-X-TARGETDURATION 10.0 s; taken as 10.0 s"), "\(result.stderr)")
        #expect(result.seconds < 20)
        let legit = await Self.legitPayloads()
        #expect(Set(Command.Send.records(in: result.stdout).compactMap(\.payload)) == legit)
    }
}
