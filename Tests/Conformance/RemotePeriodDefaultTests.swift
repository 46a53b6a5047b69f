import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// dash.js, src/streaming/controllers/XlinkController.js (`mergeElementsBack`): a Period whose
/// `xlink:href` could not be resolved is kept as the MPD writes it, its xlink attributes
/// dropped, and played: its default content (docs/CONFORMANCE.md, "xlink").
@Suite("Conformance: a remote Period that fails plays what the MPD writes", .timeLimit(.minutes(1)))
struct RemotePeriodDefaultTests {
    @Test func aFailedReferencesDefaultContentIsPlayed() async throws {
        let folder = Samples.folder.appendingPathComponent("dash/periods")
        let text = try String(contentsOf: folder.appendingPathComponent("manifest.mpd"), encoding: .utf8)
        // The second Period, kept whole as the default of a reference that answers 404.
        let mpd = text.replacingOccurrences(of: #"<Period id="p1" start="PT8S">"#,
                                            with: #"<Period id="p1" start="PT8S" xlink:href="gone.xml" xlink:actuate="onLoad">"#)
            .replacingOccurrences(of: "<MPD ", with: #"<MPD xmlns:xlink="http://www.w3.org/1999/xlink" "#)
        #expect(mpd.contains("gone.xml"))
        let server = try LocalHTTPServer { request in
            request.path == "manifest.mpd" ? LocalHTTPServer.Response(body: Array(mpd.utf8)) : .file(request.path, in: folder)
        }
        defer { server.stop() }
        let events = await Samples.scan(server.url("manifest.mpd"))
        #expect(DASHSampleTests.found(events) == (try DASHSampleTests.planted("periods")), "every tag, the second Period's from its default content")
        let said = events.warnings.compactMap { if case .remotePeriod(let reference, let failure, let asWritten) = $0.kind { (reference, failure != nil, asWritten) } else { nil } }
        #expect(said.count == 1 && said.first?.1 == true && said.first?.2 == true, "said once, as failed, its content played")
        #expect(server.requests.contains { $0.path == "gone.xml" })
    }
}
