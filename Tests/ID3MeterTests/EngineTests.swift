import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore

final class RecordingOutput: MeterOutput {
    var records: [MeterRecord] = []
    func write(_ record: MeterRecord) { records.append(record) }
    func finish() async {}
}

final class RecordingDelegate: EngineDelegate {
    var events: [EngineEvent] = []
    func engine(_ engine: ReferenceEngine, didReport event: EngineEvent) { events.append(event) }
}

@Suite("Reference engine")
struct EngineTests {
    static let appInfo = AppInfo(appID: "PXXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX", appName: "id3-meter", appVersion: "1.0")
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
    @Test func theEngineFollowsTheTableAndIgnoresUnexpectedCalls() {
        func engine(in state: EngineState) -> (ReferenceEngine, RecordingOutput) {
            let output = RecordingOutput()
            let engine = ReferenceEngine(appInfo: Self.appInfo, outputs: [output])
            if state == .processing { engine.play(channelName: "c") }
            if state == .disabled { engine.appDisableApi(true) }
            #expect(engine.state == state)
            return (engine, output)
        }
        for (state, call, next) in Self.table {
            let (engine, output) = engine(in: state)
            switch call {
            case .play: engine.play(channelName: "c")
            case .loadMetadata: engine.loadMetadata(#"{"type":"content","adModel":"1"}"#)
            case .sendID3: engine.sendID3(Self.tag, context: Self.context)
            case .playheadPosition: engine.playheadPosition(1)
            case .stop: engine.stop()
            case .end: engine.end()
            case .disable: engine.appDisableApi(true)
            case .enable: engine.appDisableApi(false)
            }
            #expect(engine.state == (next ?? state), "\(state) on \(call)")
            #expect(output.records.contains { $0.type == .sendID3 } == (call == .sendID3 && next != nil))
        }
    }

    @Test func appInfoErrors() {
        let delegate = RecordingDelegate()
        let engine = ReferenceEngine(appInfo: AppInfo(appID: "", appName: "", appVersion: "", sfcode: ""), outputs: [], delegate: delegate)
        #expect(engine.state == .disabled)
        #expect(delegate.events.map(\.code) == [1007, 1005, 1006, 1004])
        let good = RecordingDelegate()
        _ = ReferenceEngine(appInfo: Self.appInfo, outputs: [], delegate: good)
        #expect(good.events == [.startup])
    }

    @Test func metadataMustBeDTVRContentJSON() {
        let delegate = RecordingDelegate()
        let engine = ReferenceEngine(appInfo: Self.appInfo, outputs: [], delegate: delegate)
        engine.loadMetadata("{not json")
        engine.loadMetadata(#"{"type":"content","adModel":1}"#)
        engine.loadMetadata(#"{"Type":"content","adModel":"1"}"#)
        #expect(engine.state == .idle)
        #expect(delegate.events.dropFirst().map(\.code) == [1008, 1008, 1004])
        engine.loadMetadata(#"{"type":"content","adModel":"2"}"#)
        #expect(engine.state == .processing)
        #expect(engine.metadata == ["type": "content", "adModel": "2"])
    }

    @Test func onlyNielsenTagsAndNeverTwice() {
        let output = RecordingOutput()
        let delegate = RecordingDelegate()
        let engine = ReferenceEngine(appInfo: Self.appInfo, outputs: [output], delegate: delegate, now: { Date(timeIntervalSince1970: 100) })
        engine.play(channelName: "")
        #expect(engine.channelName == "defaultChannelName")
        engine.sendID3("com.apple.streaming.transportStreamTimestamp", context: Self.context)
        engine.sendID3(Self.tag, context: Self.context)
        engine.sendID3(Self.tag, context: Self.context)  // identical to the previous one
        engine.sendID3(NielsenTagTests.infoSample, context: Self.context)
        engine.sendID3(Self.tag, context: Self.context)  // same pts and payload as the first, after a reload
        engine.sendID3(Self.tag, context: TagContext(pts: 990_000, origin: TagOrigin(source: "s"), programDateTime: nil))
        engine.end()
        #expect(output.records.filter { $0.type == .sendID3 }.map(\.payload) == [Self.tag, NielsenTagTests.infoSample, Self.tag])
        #expect(engine.delivered == 3)
        #expect(engine.suppressed == 3)
        #expect(output.records.filter { $0.type == .event }.map(\.event) == [2001, 2002])
        #expect(delegate.events.map(\.code) == [2001, 2002])
        #expect(output.records.first { $0.type == .sendID3 }?.sentAt == 100)
    }
}
