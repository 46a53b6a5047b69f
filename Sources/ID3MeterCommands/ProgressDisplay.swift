import Foundation
import ID3Meter
import Synchronization

/// One self-rewriting line on a terminal's stderr: inputs done of total, MB read, MB/s, ETA.
final class ProgressDisplay: Sendable {
    private let progress: ScanProgress
    private let started = ContinuousClock.now
    /// The drawing task, `nil` once stopped; drawing happens under the lock so none follows `stop()`.
    private let timer = Mutex<Task<Void, Never>?>(nil)
    private static let clearLine = "\r\u{1B}[K"

    init(progress: ScanProgress) {
        self.progress = progress
        timer.withLock { $0 = Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                timer.withLock { if $0 != nil { draw() } }
            }
        } }
    }

    func stop() {
        timer.withLock {
            $0?.cancel()
            $0 = nil
            FileHandle.standardError.write(Data(Self.clearLine.utf8))
        }
    }

    private func draw() {
        let snapshot = progress.snapshot
        let seconds = max(started.duration(to: .now).seconds, 0.001)
        let megabytes = Double(snapshot.bytesRead) / 1_048_576
        let rate = megabytes / seconds
        var line = "\(snapshot.inputsDone)/\(snapshot.inputs) inputs  \(String(format: "%.1f MB  %.1f MB/s", megabytes, rate))"
        if snapshot.bytesKnown > snapshot.bytesRead, rate > 0 {
            let left = Int(Double(snapshot.bytesKnown - snapshot.bytesRead) / 1_048_576 / rate)
            line += String(format: "  ETA %d:%02d", left / 60, left % 60)
        }
        FileHandle.standardError.write(Data((Self.clearLine + line).utf8))
    }
}

extension Optional where Wrapped == ProgressDisplay {
    /// Prints error lines with the progress line out of their way.
    func printing(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        if self != nil { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        lines.forEach(printError)
    }
}
