import Glibc

/// A local file's bytes (its `range`, when given), read in chunks into one reused buffer.
/// Blocking, but a local disk answers at once: nothing here waits on a network.
enum LocalFile {
    static let chunkSize = 1 << 20

    static func read(_ location: String, range: ByteRange?, limit: Int, resource: FetchLimits.Resource,
                     consume: (UnsafeBufferPointer<UInt8>) -> Void) throws(FetchError) {
        let path = location.lowercased().hasPrefix("file:") ? Location.filePath(location) : location
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .file(errno: errno) }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR { throw .file(errno: EISDIR) }
        if let range, lseek(descriptor, off_t(range.offset), SEEK_SET) < 0 { throw .file(errno: errno) }
        let wanted = range?.length ?? .max
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var total = 0
        while total < wanted {
            let room = min(buffer.count, wanted - total)
            let got = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, room) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw .file(errno: errno) }
            if got == 0 { break }
            total += got
            if total > limit { throw .tooLarge(resource, limit: limit, declared: nil) }
            buffer.withUnsafeBufferPointer { consume(UnsafeBufferPointer(rebasing: $0[..<got])) }
        }
        if let range, total < range.length { throw .shortRange(range, got: total) }
    }
}
