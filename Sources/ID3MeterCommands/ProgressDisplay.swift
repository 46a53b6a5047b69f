import Foundation
import ID3Meter
import Synchronization

/// One self-rewriting line on a terminal's stderr, always below what was written before it:
/// inputs done of total, segments of the playlists being read, MB read, MB/s, ETA.
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
            _ = LineWriter.appendWhole(Array(Self.clearLine.utf8), to: STDERR_FILENO)
        }
    }

    fileprivate func around(_ write: () -> Void) {
        timer.withLock { running in
            guard running != nil else { return write() }
            _ = LineWriter.appendWhole(Array(Self.clearLine.utf8), to: STDERR_FILENO)
            write()
            draw()
        }
    }

    private func draw() {
        let snapshot = progress.snapshot
        let seconds = max(started.duration(to: .now).seconds, 0.001)
        let megabytes = Double(snapshot.bytesRead) / 1_048_576
        let rate = megabytes / seconds
        var line = "\(snapshot.inputsDone)/\(snapshot.inputs) inputs"
        if let segments = snapshot.segments { line += "  \(segments.done)/\(segments.total) segments" }
        line += "  " + String(format: "%.1f MB  %.1f MB/s", megabytes, rate)
        if snapshot.bytesKnown > snapshot.bytesRead, rate > 0 {
            let left = Int(Double(snapshot.bytesKnown - snapshot.bytesRead) / 1_048_576 / rate)
            line += String(format: "  ETA %d:%02d", left / 60, left % 60)
        }
        _ = LineWriter.appendWhole(Array((Self.clearLine + line).utf8), to: STDERR_FILENO)
    }
}

extension Optional where Wrapped == ProgressDisplay {
    /// Runs `write` (records or messages for the same terminal) with the progress line out of the
    /// way, and draws it again below what was written: the two never share a line.
    func writing(_ write: () -> Void) {
        guard let display = self else { return write() }
        display.around(write)
    }
}
