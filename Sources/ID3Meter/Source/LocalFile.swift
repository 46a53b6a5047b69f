import Glibc

/// A local file open for reading (its `range`, when given), a chunk at a time into one reused
/// buffer. Blocking, but a local disk answers at once: nothing here waits on a network.
struct LocalFile: ~Copyable {
    /// Small enough for the bytes to be in the core's cache when they are demuxed, and under
    /// malloc's mmap threshold (128 KB): a bigger buffer was mapped afresh for every file read,
    /// at a page fault per 4 KB (a folder of 200 files took 27,000 of them).
    static let chunkSize = 124 << 10

    private let descriptor: Int32
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private let range: ByteRange?
    private let limit: Int
    private let resource: Fetcher.Limits.Resource
    private var total = 0

    init(_ location: String, range: ByteRange?, limit: Int, resource: Fetcher.Limits.Resource) throws(FetchError) {
        let descriptor = open(Self.path(of: location), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .file(errno: errno) }
        var status = stat()
        let failure: FetchError? = if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
            .file(errno: EISDIR)
        } else if let range, lseek(descriptor, off_t(range.offset), SEEK_SET) < 0 {
            .file(errno: errno)
        } else {
            nil
        }
        if let failure {
            close(descriptor)
            throw failure
        }
        self.descriptor = descriptor
        self.range = range
        self.limit = limit
        self.resource = resource
        // Not cleared first: only what `read` wrote is ever looked at.
        buffer = .allocate(capacity: Self.chunkSize)
    }

    deinit {
        close(descriptor)
        buffer.deallocate()
    }

    /// The next chunk, valid until the next call; `nil` at the end (of `range`). `interrupt`
    /// (a scan stopped by a signal) is checked before each read.
    mutating func next(interrupt: Interrupt?) throws(FetchError) -> UnsafeBufferPointer<UInt8>? {
        let wanted = range?.length ?? .max
        while total < wanted {
            if interrupt?.isCancelled == true { throw .cancelled }
            let got = Glibc.read(descriptor, buffer.baseAddress, min(buffer.count, wanted - total))
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw .file(errno: errno) }
            if got == 0 { break }
            total += got
            if total > limit { throw .tooLarge(resource, limit: limit, declared: nil) }
            return UnsafeBufferPointer(rebasing: buffer[..<got])
        }
        if let range, total < range.length { throw .shortRange(range, got: total) }
        return nil
    }

    /// Every chunk to `consume`, until the end or until `interrupt` is cancelled.
    static func read(_ location: String, range: ByteRange?, limit: Int, resource: Fetcher.Limits.Resource, interrupt: Interrupt?,
                     consume: (UnsafeBufferPointer<UInt8>) -> Void) throws(FetchError) {
        var file = try LocalFile(location, range: range, limit: limit, resource: resource)
        while let chunk = try file.next(interrupt: interrupt) { consume(chunk) }
    }

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
}
