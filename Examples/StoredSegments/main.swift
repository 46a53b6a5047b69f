// A DTVR backend that already holds segment bytes (from its own recorder or object store)
// and wants their Nielsen tags: ID3MeterCore only, no libav, no network.
//
//   swift run stored-segments-example samples/spec/hls/seg0.ts samples/packed/aac/seg1.aac
//
// Each segment's bytes go to the extractor its first bytes call for, here in 64 KB pieces as
// they would come off a store; the events are the same for any chunking.
import FoundationEssentials
import ID3MeterCore

for path in CommandLine.arguments.dropFirst() {
    guard let data = FileManager.default.contents(atPath: path) else {
        print("\(path): cannot read")
        continue
    }
    var extractor = MediaExtractor(origin: TagOrigin(source: path))
    var tags = 0
    let pieceSize = 64 << 10
    func handle(_ event: MediaEvent) {
        switch event {
        case .tag(let timed):
            for nielsen in timed.nielsenTags {
                tags += 1
                print("\(path): pts \(timed.pts.map(String.init) ?? "-") \(nielsen.payload.prefix(40))... "
                      + (nielsen.issues.isEmpty ? "valid" : nielsen.issues.map(\.description).joined(separator: ", ")))
            }
        case .malformed(let error, _, _): print("\(path): malformed tag: \(error)")
        case .failure(let failure), .warning(let failure): print("\(path): \(failure.kind)")
        case .opened, .segment, .resumed, .mediaTime: break
        }
    }
    let bytes = [UInt8](data)
    for start in stride(from: 0, to: bytes.count, by: pieceSize) {
        extractor.feed(Array(bytes[start..<min(start + pieceSize, bytes.count)]), emit: handle)
    }
    extractor.finish(emit: handle)
    print("\(path): \(extractor.form.map { "\($0)" } ?? "unknown form"), \(tags) Nielsen tag(s)")
}
