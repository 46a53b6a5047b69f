// A DTVR backend's own engine, fed by id3-meter's pipeline.
//
//   swift run custom-engine-example samples/hls/master.m3u8
//
// Part 1 reads the tags as an AsyncSequence; part 2 plays them in real time into an engine
// that stands in for a backend's client of the Nielsen SDK.
import Foundation
import ID3Meter

/// Prints each call and counts the tags; a real backend would forward them to the Nielsen App
/// SDK. An actor conforms as it is: the session awaits each call.
actor PrintingEngine: MeteringEngine {
    private(set) var tags = 0

    func play(channelName: String) { print("play(\(channelName))") }
    func loadMetadata(_ json: String) { print("loadMetadata(\(json))") }
    func sendID3(_ payload: String, context: TagContext) {
        tags += 1
        print("sendID3 pts=\(context.pts.map(String.init) ?? "-") \(payload.prefix(60))...")
    }
    func playheadPosition(_ position: Int64) { print("playheadPosition(\(position))") }
    func stop() { print("stop()") }
    func end() { print("end()") }
}

let input = CommandLine.arguments.dropFirst().first ?? "samples/hls/master.m3u8"

// 1. The tags, segment by segment, as fast as they can be read: a segment's `.segment` event
// follows its tags.
var nielsenInSegment = 0
// Connections of its own, shut down at the end: the program leaves no socket or thread behind.
let connections = HTTPConnections(ioTimeout: .seconds(10))
let scanner = TagScanner(fetcher: Fetcher(connections: connections))
// A failure the reading goes on after is an event; the one that ends it is thrown.
do throws(InputFailure) {
    for try await event in TagSource(input: input, scanner: scanner) {
        switch event {
        case .tag(let timed):
            nielsenInSegment += timed.nielsenTags.count
        case .segment(let segment):
            print("\(segment.uri): \(nielsenInSegment) Nielsen tag(s)")
            nielsenInSegment = 0
        case .failure(let failure):
            print("error: \(failure)")
        case .opened, .malformed, .warning, .resumed, .mediaTime:
            break
        }
    }
} catch {
    print("error: \(error) (\(error.code.rawValue))")
}

// 2. The same source played in real time, four times faster, into our engine.
let session = MeteringSession(channelName: MeteringSession.channelName(for: input))
let feeder = Feeder(clock: ContinuousClock(), speed: 4)
let printing = PrintingEngine()
do throws(InputFailure) {
    for try await event in session.events(TagSource(input: input), feeder: feeder, engine: printing) {
        if case .read(.failure(let failure)) = event { print("error: \(failure)") }
    }
} catch {
    print("error: \(error)")
}
print("\(await printing.tags) tags played")

// 3. The reference engine at full speed (a `StreamMeter` that does not wait: the same schedule,
// as `--speed max` runs it), its records going to a JSON-lines file through an `OutputSet`: a
// record the disk refuses is held and written later, and `notice` hears when an output cannot
// write and what it had to drop (`recordsLost` counts it).
let file = FileManager.default.temporaryDirectory.appendingPathComponent("custom-engine-example.jsonl").path
let outputs = OutputSet([try StreamOutput(appendingTo: file, rotation: StreamOutput.Rotation(maximumBytes: 64 << 20, keep: 4))]) { notice in
    print("output: \(notice.message ?? "")")
}
let reference = await ReferenceEngine(appInfo: ReferenceEngine.AppInfo(appID: "PXXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX", appName: "example", appVersion: "1.0"),
                                outputs: [outputs])
do {
    for try await case .read(.failure(let failure)) in StreamMeter(input: input, session: session, pace: .noWaiting).events(engine: reference) {
        print("error: \(failure)")
    }
} catch {
    print("error: \(error)")
}
await outputs.finish()
print("\(await reference.delivered) deliveries recorded in \(file), \(outputs.recordsLost) lost")
await connections.shutdown()
