import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// Server-side ad insertion's shape: an ad Period written as `xlink:href` with
/// `xlink:actuate="onLoad"`, resolved when the MPD is read (the two-Period sample's second Period,
/// served as the remote document); a reference that fails is said and its time passed; an
/// `onRequest` one is never fetched, as players leave it.
@Suite("DASH remote Periods (xlink)", .serialized, .timeLimit(.minutes(2)))
struct RemotePeriodTests {
    static let folder = Samples.folder.appendingPathComponent("dash/periods")

    /// The periods sample with its second Period at `ad.xml`, and the Periods `extra` adds.
    static func server(extra: String = "") throws -> LocalHTTPServer {
        let text = try String(contentsOf: folder.appendingPathComponent("manifest.mpd"), encoding: .utf8)
        let start = text.range(of: #"<Period id="p1""#)!.lowerBound, end = text.range(of: "</Period>", range: start..<text.endIndex)!.upperBound
        let remote = "<?xml version='1.0' encoding='utf-8'?>\n" + text[start..<end]
        let mpd = text.replacingCharacters(in: start..<end, with: #"<Period start="PT8S" xlink:href="ad.xml" xlink:actuate="onLoad"/>"# + extra)
            .replacingOccurrences(of: "<MPD ", with: #"<MPD xmlns:xlink="http://www.w3.org/1999/xlink" "#)
        return try LocalHTTPServer { request in
            switch request.path {
            case "manifest.mpd": LocalHTTPServer.Response(body: Array(mpd.utf8), contentType: "application/dash+xml")
            case "ad.xml": LocalHTTPServer.Response(body: Array(remote.utf8), contentType: "application/xml")
            default: .file(request.path, in: folder)
            }
        }
    }

    @Test func anAdPeriodResolvedOnLoadIsReadAsIfWrittenInPlace() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let events = await Samples.scan(server.url("manifest.mpd"))
        #expect(events.failures.isEmpty && events.warnings.isEmpty, "\(events.failures) \(events.warnings)")
        #expect(DASHSampleTests.found(events) == (try DASHSampleTests.planted("periods")))
        #expect(server.requests.filter { $0.path == "ad.xml" }.count == 1)

        let run = try await offThePool { try Command.run(["--speed", "max", "--format", "jsonl", server.url("manifest.mpd")]) }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.sends == (try DASHSampleTests.planted("periods")).map { Command.Send(pts: $0.pts, payload: $0.owner) })
    }

    @Test func aFailedReferenceIsSaidAndAnOnRequestOneIsNotFetched() async throws {
        let extra = #"<Period start="PT16S" duration="PT4S" xlink:href="gone.xml" xlink:actuate="onLoad"/>"#
            + #"<Period start="PT20S" duration="PT4S" xlink:href="later.xml"/>"#
            + #"<Period start="PT24S" duration="PT4S" xlink:href="urn:mpeg:dash:resolve-to-zero:2013" xlink:actuate="onLoad"/>"#
            // Without `actuate` (so `onRequest`) too: removed, as dash.js and shaka remove it.
            + #"<Period start="PT28S" duration="PT4S" xlink:href="urn:mpeg:dash:resolve-to-zero:2013"/>"#
        let server = try Self.server(extra: extra)
        defer { server.stop() }
        let events = await Samples.scan(server.url("manifest.mpd"))
        #expect(DASHSampleTests.found(events) == (try DASHSampleTests.planted("periods")), "the resolved Periods' tags all the same")
        let said = events.warnings.compactMap { warning -> (String, Bool)? in
            if case .remotePeriod(let reference, let failure, _) = warning.kind { (Location.name(reference), failure != nil) } else { nil }
        }
        #expect(said.map(\.0) == ["gone.xml", "later.xml"] && said.map(\.1) == [true, false], "\(said)")
        #expect(events.warnings.contains { "\($0)".contains("gone.xml") && "\($0)".contains("404") }, "\(events.warnings.map { "\($0)" })")
        #expect(!server.requests.contains { $0.path == "later.xml" }, "onRequest is left to a player that reaches it")
    }

    /// Bounded: a remote document is a playlist for the size limit, brings 32 Periods at most,
    /// and no more than 16 references are resolved in one MPD.
    @Test func remoteDocumentsAreBounded() async throws {
        let many = (0..<20).map { #"<Period duration="PT1S" xlink:href="p\#($0).xml" xlink:actuate="onLoad"/>"# }.joined()
        let mpd = #"<MPD xmlns:xlink="http://www.w3.org/1999/xlink" type="static" mediaPresentationDuration="PT20S">\#(many)</MPD>"#
        let server = try LocalHTTPServer { request in
            if request.path == "manifest.mpd" { return LocalHTTPServer.Response(body: Array(mpd.utf8)) }
            return LocalHTTPServer.Response(body: Array(String(repeating: #"<Period duration="PT0.01S"/>"#, count: 40).utf8))
        }
        defer { server.stop() }
        let loader = MPDLoader(fetcher: Fetcher(retry: .none))
        let loaded = try await loader.load(server.url("manifest.mpd"))
        #expect(server.requests.count == 1 + MPDLoader.maximumRemotePeriods)
        #expect(loaded.remoteFailures.count == 20)
        #expect(loaded.remoteFailures.values.allSatisfy { "\($0)".contains("more than") }, "\(loaded.remoteFailures.values.map { "\($0)" })")
    }
}
