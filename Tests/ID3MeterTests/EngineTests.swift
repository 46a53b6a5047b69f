import Foundation
import Synchronization
import Testing
@testable import ID3Meter
@testable import ID3MeterCore

/// An actor output, as a backend might write one: it conforms as it is.
actor RecordingOutput: MeterOutput {
    var records: [MeterRecord] = []
    func write(_ record: MeterRecord) { records.append(record) }
    func finish() {}
}

extension RecordingOutput {
    /// The SDK event codes the engine reported, as its event records say them.
    var eventCodes: [Int] { records.eventCodes }
}

@Suite("Reference engine")
struct EngineTests {
    static let appInfo = ReferenceEngine.AppInfo(appID: "PXXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX", appName: "id3-meter", appVersion: "1.0")
    static let tag = NielsenTagTests.sample
    static let context = TagContext(pts: 900_000, origin: TagOrigin(source: "s"), programDateTime: nil)

    /// The state table, cell by cell: (state, call) -> next state, nil where the call is ignored.
    static let table: [(EngineState, EngineCall, EngineState?)] = [
        (.idle, .play, .processing), (.idle, .loadMetadata, .processing), (.idle, .sendID3, nil),
        (.idle, .playheadPosition, nil), (.idle, .stop, nil), (.idle, .end, nil), (.idle, .disable, .disabled), (.idle, .enable, nil),
        (.processing, .play, nil), (.processing, .loadMetadata, .processing), (.processing, .sendID3, .processing),
        (.processing, .playheadPosition, .processing), (.processing, .stop, .idle), (.processing, .end, .idle),
        (.processing, .disable, nil), (.processing, .enable, nil),
        (.disabled, .play, nil), (.disabled, .loadMetadata, nil), (.disabled, .sendID3, nil), (.disabled, .playheadPosition, nil),
        (.disabled, .stop, nil), (.disabled, .end, nil), (.disabled, .disable, nil), (.disabled, .enable, .idle),
    ]

    @Test func everyCellOfTheStateTable() {
        #expect(Self.table.count == 3 * EngineCall.allCases.count)
        for (state, call, next) in Self.table {
            #expect(state.after(call) == next, "\(state) on \(call)")
        }
    }

    /// The same table through the engine's public calls: the state it ends in, and whether a tag got out.
    @Test func theEngineFollowsTheTableAndIgnoresUnexpectedCalls() async {
        func engine(in state: EngineState) async -> (ReferenceEngine, RecordingOutput) {
            let output = RecordingOutput()
            let engine = await ReferenceEngine(appInfo: Self.appInfo, outputs: [output])
            if state == .processing { await engine.play(channelName: "c") }
            if state == .disabled { await engine.appDisableApi(true) }
            #expect(await engine.state == state)
            return (engine, output)
        }
        for (state, call, next) in Self.table {
            let (engine, output) = await engine(in: state)
            switch call {
            case .play: await engine.play(channelName: "c")
            case .loadMetadata: await engine.loadMetadata(#"{"type":"content","adModel":"1"}"#)
            case .sendID3: await engine.sendID3(Self.tag, context: Self.context)
            case .playheadPosition: await engine.playheadPosition(1)
            case .stop: await engine.stop()
            case .end: await engine.end()
            case .disable: await engine.appDisableApi(true)
            case .enable: await engine.appDisableApi(false)
            }
            #expect(await engine.state == (next ?? state), "\(state) on \(call)")
            #expect(await !output.records.deliveries.isEmpty == (call == .sendID3 && next != nil))
        }
    }

    @Test func appInfoErrors() async {
        let output = RecordingOutput()
        let engine = await ReferenceEngine(appInfo: ReferenceEngine.AppInfo(appID: "", appName: "", appVersion: "", sfcode: ""), outputs: [output])
        #expect(await engine.state == .disabled)
        #expect(await output.eventCodes == [1007, 1005, 1006, 1004])
        let good = RecordingOutput()
        _ = await ReferenceEngine(appInfo: Self.appInfo, outputs: [good])
        #expect(await good.eventCodes == [2001])
    }

    @Test func metadataMustBeDTVRContentJSON() async {
        let output = RecordingOutput()
        let engine = await ReferenceEngine(appInfo: Self.appInfo, outputs: [output])
        await engine.loadMetadata("{not json")
        await engine.loadMetadata(#"{"type":"content","adModel":1}"#)
        await engine.loadMetadata(#"{"Type":"content","adModel":"1"}"#)
        #expect(await engine.state == .idle)
        #expect(await output.eventCodes.dropFirst() == [1008, 1008, 1004])
        await engine.loadMetadata(#"{"type":"content","adModel":"2"}"#)
        #expect(await engine.state == .processing)
        #expect(await engine.metadata == ["type": "content", "adModel": "2"])
    }

    @Test func onlyNielsenTagsAndNeverTwice() async {
        let output = RecordingOutput()
        let engine = await ReferenceEngine(appInfo: Self.appInfo, outputs: [output], now: { Date(timeIntervalSince1970: 100) })
        await engine.play(channelName: "")
        #expect(await engine.channelName == "defaultChannelName")
        await engine.sendID3("com.apple.streaming.transportStreamTimestamp", context: Self.context)
        await engine.sendID3(Self.tag, context: Self.context)
        await engine.sendID3(Self.tag, context: Self.context)  // identical to the previous one
        await engine.sendID3(NielsenTagTests.infoSample, context: Self.context)
        await engine.sendID3(Self.tag, context: Self.context)  // same pts and payload as the first, after a reload
        await engine.sendID3(Self.tag, context: TagContext(pts: 990_000, origin: TagOrigin(source: "s"), programDateTime: nil))
        await engine.end()
        #expect(await output.records.deliveries.map(\.payload) == [Self.tag, NielsenTagTests.infoSample, Self.tag])
        #expect(await engine.delivered == 3)
        #expect(await engine.suppressed == 3)
        #expect(await output.records.eventCodes == [2001, 2002])
        #expect(await output.records.deliveries.first?.sentAt == 100)
    }

}

/// The DTVR metadata a session hands `loadMetadata` is JSON whatever the ad model says.
@Suite("Session metadata")
struct SessionMetadataTests {
    @Test func theAdModelStaysAString() throws {
        let plain = try JSONSerialization.jsonObject(with: Data(MeteringSession(channelName: "c", adModel: "2").metadataJSON.utf8))
        #expect(plain as? [String: String] == ["type": "content", "adModel": "2"])
        let hostile = #"1","type":"ad"#
        let parsed = try JSONSerialization.jsonObject(with: Data(MeteringSession(channelName: "c", adModel: hostile).metadataJSON.utf8))
        #expect(parsed as? [String: String] == ["type": "content", "adModel": hostile], "a quote cannot add or replace a key")
    }
}

/// The channel name a session takes from its input when none is given.
@Suite("Channel names from inputs")
struct ChannelNameTests {
    @Test(arguments: [
        ("https://cdn.example.com/live/news/master.m3u8?token=abc", "news"),
        ("https://cdn.example.com/vod/sport.m3u8", "sport"),
        ("https://cdn.example.com/news/index.mpd", "news"),
        ("/recordings/evening-news.ts", "evening-news"),
        ("udp://127.0.0.1:5999", "127.0.0.1:5999"),
        ("udp://@239.1.1.1:5000", "239.1.1.1:5000"),
        ("udp://239.1.1.1:5000/", "239.1.1.1:5000"),
        ("rtp://[::1]:5004", "[::1]:5004"),
        ("srt://ingest.example.com:9000?streamid=news-hd&latency=200", "news-hd"),
        ("srt://ingest.example.com:9000?streamid=#!::r=live/news,m=request", "live/news"),
        ("srt://user@ingest.example.com:9000", "ingest.example.com:9000"),
        ("", "defaultChannelName"),
    ])
    func aNameThatSaysWhichStream(input: String, name: String) {
        #expect(MeteringSession.channelName(for: input) == name)
    }
}
