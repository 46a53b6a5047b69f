import Glibc

/// A local file's bytes (its `range`, when given), read in chunks into one reused buffer.
/// Blocking, but a local disk answers at once: nothing here waits on a network.
enum LocalFile {
    /// Small enough for the bytes to be in the core's cache when they are demuxed, and under
    /// malloc's mmap threshold (128 KB): a bigger buffer was mapped afresh for every file read,
    /// at a page fault per 4 KB (a folder of 200 files took 27,000 of them).
    static let chunkSize = 124 << 10

    /// The file a local location names: a path, or a `file:` URL.
    static func path(of location: String) -> String {
        location.lowercased().hasPrefix("file:") ? Location.filePath(location) : location
    }

    /// The size of the regular file a local location names; `nil` for anything else (a URL, a
    /// folder, a device, a missing file).
    static func regularFileSize(of location: String) -> Int? {
        guard Location.transport(of: location) == .file else { return nil }
        var status = stat()
        guard stat(path(of: location), &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(status.st_size)
    }

    /// Reads until the end (of `range`), or until `interrupt` is cancelled (a scan stopped by a
    /// signal), checked between chunks.
    static func read(_ location: String, range: ByteRange?, limit: Int, resource: Fetcher.Limits.Resource, interrupt: Interrupt?,
                     consume: (UnsafeBufferPointer<UInt8>) -> Void) throws(FetchError) {
        let path = path(of: location)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .file(errno: errno) }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR { throw .file(errno: EISDIR) }
        if let range, lseek(descriptor, off_t(range.offset), SEEK_SET) < 0 { throw .file(errno: errno) }
        let wanted = range?.length ?? .max
        // Not cleared first: only what `read` wrote is ever looked at.
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: chunkSize)
        defer { buffer.deallocate() }
        var total = 0
        while total < wanted {
            if interrupt?.isCancelled == true { throw .cancelled }
            let room = min(buffer.count, wanted - total)
            let got = Glibc.read(descriptor, buffer.baseAddress, room)
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw .file(errno: errno) }
            if got == 0 { break }
            total += got
            if total > limit { throw .tooLarge(resource, limit: limit, declared: nil) }
            consume(UnsafeBufferPointer(rebasing: buffer[..<got]))
        }
        if let range, total < range.length { throw .shortRange(range, got: total) }
    }
}
