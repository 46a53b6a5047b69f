import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a `StreamOutput`'s lines go: stdout, or a records file. The file is opened for
/// appending; a last line a crash left torn is set aside first (never appended to), and the file
/// is rotated by size or age when asked, keeping the newest rotated files.
final class RecordFile {
    /// The file's path; `nil` for stdout.
    let path: String?
    let writer: LineWriter
    private let rotation: StreamOutput.Rotation?
    private var size: UInt64 = 0
    private var openedAt: Date
    private let now: @Sendable () -> Date
    /// What opening or rotating had to say (a torn line set aside, a rename refused).
    private(set) var notes: [String] = []

    /// Writes to standard output.
    init(standardOutput: ()) {
        path = nil
        writer = LineWriter(descriptor: STDOUT_FILENO, name: "stdout")
        rotation = nil
        now = Date.init
        openedAt = now()
    }

    /// Appends to the file at `path`, created if need be; throws the reason it cannot be opened.
    init(appendingTo path: String, rotation: StreamOutput.Rotation? = nil, now: @escaping @Sendable () -> Date = Date.init) throws(StreamOutput.OpenError) {
        self.path = path
        self.rotation = rotation
        self.now = now
        openedAt = now()
        let descriptor = try Self.open(path)
        writer = LineWriter(descriptor: descriptor, name: "records file \(path)")
        size = Self.size(of: descriptor)
        repairTornEnd()
    }

    deinit { if path != nil { close(writer.descriptor) } }

    func append(_ line: [UInt8], sentAt: Double, channel: String?) {
        rotateIfDue(adding: line.count + 1)
        writer.append(line, sentAt: sentAt, channel: channel)
        if path != nil, !writer.isHolding { size = Self.size(of: writer.descriptor) }
    }

    func takeNotes() -> [String] {
        defer { notes = [] }
        return notes
    }

    /// The rotated files of `path`, oldest first: `path.YYYYMMDDTHHMMSSZ` (with `-N` when two
    /// rotations fell in one second).
    static func rotatedFiles(of path: String) -> [String] {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent()
        let prefix = url.lastPathComponent + "."
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { name in
            guard name.hasPrefix(prefix) else { return false }
            let stamp = name.dropFirst(prefix.count)
            return stamp.count >= 16 && stamp.prefix(16).allSatisfy { $0.isNumber || $0 == "T" || $0 == "Z" }
        }
        .sorted(by: Self.rotatedOrder)
        .map { folder.appendingPathComponent($0).path }
    }

    /// `a.jsonl.20261124T101500Z` before `a.jsonl.20261124T101500Z-2` before `-10`.
    private static func rotatedOrder(_ a: String, _ b: String) -> Bool {
        func key(_ name: String) -> (Substring, Int) {
            guard let dash = name.lastIndex(of: "-"), let number = Int(name[name.index(after: dash)...]),
                  name[..<dash].hasSuffix("Z") else { return (name[...], 1) }
            return (name[..<dash], number)
        }
        return key(a) < key(b)
    }

    private static func open(_ path: String) throws(StreamOutput.OpenError) -> Int32 {
        let descriptor = Glibc.open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw StreamOutput.OpenError(path: path, errno: errno) }
        return descriptor
    }

    private static func size(of descriptor: Int32) -> UInt64 {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? UInt64(info.st_size) : 0
    }

    /// A last line without its newline is what a crash or a full disk left of a record: it is
    /// moved to `path.torn-<time>` and cut off. When it cannot be moved (the disk is still
    /// full), it is left where it is and the next line starts on a line of its own.
    private func repairTornEnd() {
        guard let path, size > 0 else { return }
        let descriptor = writer.descriptor
        var end = size
        var lineStart: UInt64?
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var lastByte: UInt8 = 0
        _ = pread(descriptor, &lastByte, 1, off_t(size - 1))
        guard lastByte != UInt8(ascii: "\n") else { return }
        // A record is a few KB at most: 16 MB back without a newline is all torn.
        while end > 0, size - end < 16 << 20, lineStart == nil {
            let count = Int(min(UInt64(chunk.count), end))
            let read = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, count, off_t(end) - off_t(count)) }
            guard read == count else { break }
            if let newline = chunk[..<count].lastIndex(of: UInt8(ascii: "\n")) { lineStart = end - UInt64(count) + UInt64(newline) + 1 }
            end -= UInt64(count)
        }
        let start = lineStart ?? end
        let tornCount = Int(size - start)
        var torn = [UInt8](repeating: 0, count: tornCount)
        _ = torn.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, tornCount, off_t(start)) }
        let aside = "\(path).torn-\(Self.stamp(now()))"
        let asideDescriptor = Glibc.open(aside, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if asideDescriptor >= 0, LineWriter.appendWhole(torn, to: asideDescriptor) == nil, fsync(asideDescriptor) == 0,
           ftruncate(descriptor, off_t(start)) == 0 {
            close(asideDescriptor)
            size = start
            notes.append("\(path) ended in a torn line (\(torn.count) bytes, no newline): set aside as \(aside)")
            return
        }
        if asideDescriptor >= 0 {
            close(asideDescriptor)
            unlink(aside)
        }
        writer.endsMidLine = true
        notes.append("\(path) ends in a torn line (\(torn.count) bytes) that could not be set aside (\(String(cString: strerror(errno)))): "
                     + "left as a line of its own")
    }

    private func rotateIfDue(adding bytes: Int) {
        guard let path, let rotation, !writer.isHolding, size > 0 else { return }
        let tooBig = rotation.maximumBytes.map { size + UInt64(bytes) > $0 } ?? false
        let tooOld = rotation.maximumAge.map { now().timeIntervalSince(openedAt) >= $0 } ?? false
        guard tooBig || tooOld else { return }
        // Numbered after the newest of the same second still there: a name freed by the
        // retention must not come back, where it would sort before the files kept.
        let base = "\(path).\(Self.stamp(now()))"
        let numbers = Self.rotatedFiles(of: path).compactMap { file in
            file == base ? 1 : file.hasPrefix(base + "-") ? Int(file.dropFirst(base.count + 1)) : nil
        }
        let aside = numbers.max().map { "\(base)-\($0 + 1)" } ?? base
        _ = fsync(writer.descriptor)
        guard rename(path, aside) == 0 else {
            notes.append("records file \(path): cannot rotate to \(aside) (\(String(cString: strerror(errno)))); still writing \(path)")
            openedAt = now()
            return
        }
        let replacement: Int32
        do { replacement = try Self.open(path) } catch {
            // The rotated file is still open: the records go on into it until the next try.
            notes.append("records file \(path): rotated to \(aside), but a new file cannot be made (\(error.reason)); writing on in \(aside)")
            openedAt = now()
            return
        }
        close(writer.descriptor)
        writer.replaceDescriptor(replacement)
        size = 0
        openedAt = now()
        if let keep = rotation.keep {
            for old in Self.rotatedFiles(of: path).dropLast(keep) where unlink(old) != 0 {
                notes.append("records file \(path): cannot remove the rotated file \(old): \(String(cString: strerror(errno)))")
            }
        }
    }

    private static func stamp(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(format: "%04d%02d%02dT%02d%02d%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}

extension StreamOutput {
    /// A records file that cannot be opened: its path, and the system's reason.
    public struct OpenError: Error, Sendable, CustomStringConvertible {
        public var path: String
        /// What `open(2)` said.
        public var errno: Int32
        /// The system's words for `errno`.
        public var reason: String { String(cString: strerror(errno)) }
        public var description: String { "cannot open records file \(path): \(reason)" }
    }
}
