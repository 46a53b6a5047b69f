#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension UnsafeBufferPointer<UInt8> {
    /// Where `byte` first occurs at or after `start`, found with `memchr` (many bytes at a
    /// time: a Nielsen owner's 249 bytes are searched for its NUL and its seven slashes for
    /// every tag).
    func firstIndex(of byte: UInt8, from start: Int = 0) -> Int? {
        guard let base = baseAddress, start < count else { return nil }
        return memchr(base + start, Int32(byte), count - start).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) }
    }
}
