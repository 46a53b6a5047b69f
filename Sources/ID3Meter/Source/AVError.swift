import CID3MeterShim
import Glibc

/// A libav* failure: the AVERROR code and libav's own words for it.
public struct AVError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int32

    public init(code: Int32) { self.code = code }

    public var isEndOfFile: Bool { code == idm_error_eof() }
    public var isCancelled: Bool { code == idm_error_exit() }
    public var isInvalidArgument: Bool { code == -EINVAL }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: 256)
        idm_error_string(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Throws for a negative libav return value.
    static func check(_ result: Int32) throws(AVError) {
        if result < 0 { throw AVError(code: result) }
    }
}
