import ArgumentParser
import Foundation
import SampleGenerator

@main
struct SampleGeneratorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "id3-sample-gen",
        abstract: "Write id3-meter's sample TS files and HLS streams, each with the list of tags written into it.",
        discussion: """
            The libavformat samples remux base audio/video TS files (make them with the ffmpeg CLI; \
            `make samples` does) and add a timed-ID3 stream through libavformat's MPEG-TS muxer. \
            The spec samples come from an independent MPEG-TS writer. Beside each sample, \
            NAME.expected.jsonl lists every ID3 frame written, in order: tests compare against it.
            """)

    @Option(help: "Folder to write the samples into.")
    var output = "samples"

    @Option(help: "A 40 s audio/video MPEG-TS file to remux.")
    var longBase: String

    @Option(help: "A 20 s audio/video MPEG-TS file to remux.")
    var shortBase: String

    func run() throws {
        try SampleSet(output: URL(fileURLWithPath: output), longBase: longBase, shortBase: shortBase).writeAll()
    }
}
