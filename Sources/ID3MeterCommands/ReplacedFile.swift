import Foundation
import Glibc

/// A file a command writes whole (`report -o`): the file the path names is replaced at once, so
/// that a reader sees the old report or the new, never half of one. Through a symbolic link the
/// link's target is replaced and the link stays; a path that names something other than a
/// regular file (a FIFO, a device, a folder) is refused, never replaced by a file; a path that
/// ends in `/` names a folder, not a file.
enum ReplacedFile {
    enum Failure: Error, CustomStringConvertible {
        case folder
        case notRegular(String)
        case linkLoop
        case system(String, Int32)

        var description: String {
            switch self {
            case .folder: "names a folder, not a file"
            case .notRegular(let kind): "is \(kind), not a regular file: the report is written to files only (standard output without -o)"
            case .linkLoop: "is a chain of more than 40 symbolic links"
            case .system(let what, let code): "\(what): \(String(cString: strerror(code)))"
            }
        }
    }

    /// Replaces the file at `path` with `data`.
    static func write(_ data: Data, to path: String) throws(Failure) {
        guard !path.hasSuffix("/") else { throw .folder }
        let target = try resolved(path)
        var status = stat()
        let exists = lstat(target, &status) == 0
        if exists, let kind = kind(status.st_mode) { throw .notRegular(kind) }
        let folder = (target as NSString).deletingLastPathComponent
        var template = Array(((folder.isEmpty ? "." : folder) + "/.\((target as NSString).lastPathComponent).XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw .system("cannot make a file beside it", errno) }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var failure: Failure?
        // The new file keeps the old one's permissions; a new one gets what the umask leaves of 0644.
        let mode = exists ? status.st_mode & 0o7777 : 0o644 & ~Self.umaskValue
        if fchmod(descriptor, mode) != 0 { failure = .system("cannot set its permissions", errno) }
        if failure == nil {
            failure = data.withUnsafeBytes { bytes -> Failure? in
                var offset = 0
                while offset < bytes.count {
                    let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return .system("cannot write it", errno)
                    }
                    offset += written
                }
                return nil
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = .system("cannot write it", errno) }
        close(descriptor)
        if failure == nil, rename(temporary, target) != 0 { failure = .system("cannot put it in place", errno) }
        if let failure {
            unlink(temporary)
            throw failure
        }
    }

    /// `path` with its last component's symbolic links followed (a dangling link names the file to make).
    private static func resolved(_ path: String) throws(Failure) -> String {
        var current = path
        for _ in 0..<40 {
            var status = stat()
            guard lstat(current, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink(current, &buffer, buffer.count - 1)
            guard length >= 0 else { throw .system("cannot read the link", errno) }
            let link = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = link.hasPrefix("/") ? link : ((current as NSString).deletingLastPathComponent as NSString).appendingPathComponent(link)
        }
        throw .linkLoop
    }

    /// What a file that is not a regular one is, in words; `nil` for a regular file.
    private static func kind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a folder"
        case S_IFIFO: "a FIFO"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFSOCK: "a socket"
        default: "not a file"
        }
    }

    private static var umaskValue: mode_t {
        let value = umask(0o022)
        umask(value)
        return value
    }
}
