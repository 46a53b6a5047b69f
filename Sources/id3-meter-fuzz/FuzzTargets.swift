// libFuzzer harnesses for the parsers that read untrusted bytes. One binary, the target chosen
// by FUZZ_TARGET (id3, nielsen, playlist, packed, emsg, ts). Built with `make fuzz` (-sanitize=fuzzer,address and
// -DFUZZING), libFuzzer supplies main; in an ordinary build this is a replayer that runs each
// file named on the command line through the target, for regression tests of past findings.
import Foundation
import ID3Meter

enum FuzzTarget: String, CaseIterable {
    case id3, nielsen, playlist, packed, emsg, ts

    func run(_ bytes: [UInt8]) {
        switch self {
        case .id3:
            // The packet parser, whole and as FFmpeg 5.1 cuts it.
            for tag in ID3PacketParser.parse(bytes).tags {
                _ = tag.privFrames.compactMap { NielsenTag(owner: $0.owner) }
            }
        case .nielsen:
            if let tag = NielsenTag(owner: "www.nielsen.com" + String(decoding: bytes, as: UTF8.self)) {
                _ = tag.issues.map(\.description)
            }
        case .playlist:
            _ = try? PlaylistParser.parse(String(decoding: bytes, as: UTF8.self), location: "http://fuzz/a/index.m3u8")
        case .packed:
            // A packed audio segment: frame walking, resynchronisation, tags and their times.
            WholeFileForm.packedAudio.read(bytes, origin: TagOrigin(source: "fuzz")) { _ in }
        case .emsg:
            // fMP4: boxes, init segment timescales, tfdt, emsg v0/v1 and the ID3 inside.
            WholeFileForm.fragmentedMP4.read(bytes, origin: TagOrigin(source: "fuzz")) { _ in }
        case .ts:
            // MPEG-TS: sync, PSI sections, PES and tags joined across them, fed in two pieces.
            var demuxer = TimedID3Demuxer()
            let split = bytes.count / 3
            let rest = bytes.withUnsafeBufferPointer { buffer in
                let used = demuxer.demux(UnsafeBufferPointer(rebasing: buffer[..<split]), at: 0, isFinal: false) { _ in }
                return Array(buffer[used...])
            }
            _ = rest.withUnsafeBufferPointer { demuxer.demux($0, at: 0, isFinal: true) { _ in } }
            demuxer.flush { _ in }
        }
    }

    static var current: FuzzTarget {
        ProcessInfo.processInfo.environment["FUZZ_TARGET"].flatMap(FuzzTarget.init) ?? .id3
    }
}

@main
enum FuzzMain {
    static func main() {
        #if FUZZING
        runLibFuzzer()
        #else
        let target = FuzzTarget.current
        for path in CommandLine.arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("cannot read \(path)\n".utf8))
                exit(1)
            }
            target.run([UInt8](data))
        }
        print("\(target.rawValue): \(CommandLine.arguments.count - 1) inputs replayed")
        #endif
    }
}

#if FUZZING
private let target = FuzzTarget.current

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                                 _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                                 _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// libFuzzer's own driver (flags, corpus, crash files), with our target as the callback.
private func runLibFuzzer() {
    var argc = CommandLine.argc
    var argv = Optional(CommandLine.unsafeArgv)
    exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        target.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
    })
}
#endif
