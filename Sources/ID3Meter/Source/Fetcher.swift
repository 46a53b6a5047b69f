import CID3MeterShim

/// Reads whole resources (playlists, segments, keys) through libavformat's own I/O, so
/// every protocol it speaks (file, http, https) works the same for playlists and media.
public struct Fetcher: Sendable {
    public var ioTimeout: Double
    public var interrupt: Interrupt

    public init(ioTimeout: Double = 10, interrupt: Interrupt = Interrupt()) {
        self.ioTimeout = ioTimeout
        self.interrupt = interrupt
    }

    public func fetch(_ location: String) throws(AVError) -> [UInt8] {
        var bytes: UnsafeMutablePointer<UInt8>?
        var size = 0
        try AVError.check(idm_fetch(location, interrupt.pointer, Int64(ioTimeout * 1_000_000), &bytes, &size))
        defer { idm_free(bytes) }
        return bytes.map { [UInt8](UnsafeBufferPointer(start: $0, count: size)) } ?? []
    }
}
