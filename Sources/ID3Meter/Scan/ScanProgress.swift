import Foundation
import Synchronization

/// How far a batch has got, updated by the scanning threads and read by whoever shows it.
package final class ScanProgress: Sendable {
    package struct Snapshot: Sendable {
        package var inputsDone: Int
        package var inputs: Int
        package var bytesRead: Int64
        /// Sizes of the local files among the inputs; remote ones are not known in advance.
        package var bytesKnown: Int64
        /// Segments read of those listed, over the playlists being read.
        package var segments: (done: Int, total: Int)?
    }

    private struct State {
        var inputs = 0
        var inputsDone = 0
        var bytesKnown: Int64 = 0
        var bytesDone: Int64 = 0
        var inFlight: [String: Int64] = [:]
        var segments: [String: (done: Int, total: Int)] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    package func start(inputs: [String]) {
        // `stat`, not FileManager's attributes: those look up the names of the file's owner and
        // group too (reading /etc/passwd and /etc/group), a millisecond or two a file.
        let known = inputs.reduce(Int64(0)) { $0 + Int64(LocalFile.regularFileSize(of: $1) ?? 0) }
        state.withLock { $0 = State(inputs: inputs.count, bytesKnown: known) }
    }

    /// `bytes` read so far from `input` (cumulative), and for a playlist its segments read of those listed.
    package func update(_ input: String, bytes: Int64, segments: (done: Int, total: Int)? = nil) {
        state.withLock { state in
            state.inFlight[input] = bytes
            if let segments { state.segments[input] = segments }
        }
    }

    /// What one input's reader tells: its updates under the name the batch knows it by.
    package struct Entry: Sendable {
        let progress: ScanProgress
        let name: String

        func update(bytes: Int64, segments: (done: Int, total: Int)? = nil) {
            progress.update(name, bytes: bytes, segments: segments)
        }
    }

    package func entry(_ name: String) -> Entry { Entry(progress: self, name: name) }

    package func finish(_ input: String) {
        state.withLock { state in
            state.bytesDone += state.inFlight.removeValue(forKey: input) ?? 0
            state.segments.removeValue(forKey: input)
            state.inputsDone += 1
        }
    }

    package var snapshot: Snapshot {
        state.withLock { state in
            let segments = state.segments.values.reduce((done: 0, total: 0)) { ($0.done + $1.done, $0.total + $1.total) }
            return Snapshot(inputsDone: state.inputsDone, inputs: state.inputs,
                            bytesRead: state.bytesDone + state.inFlight.values.reduce(0, +), bytesKnown: state.bytesKnown,
                            segments: state.segments.isEmpty ? nil : segments)
        }
    }
}
