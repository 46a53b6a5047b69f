import CID3MeterShim
import Glibc

/// A libav* failure: the AVERROR code, libav's own words for it, and what libav logged about it
/// when that says more (a TLS alert, a protocol not on the whitelist).
package struct AVError: Error, Sendable, Equatable, CustomStringConvertible {
    package let code: Int32
    /// libav's last error line on this thread when it failed, when it adds to `code`'s words.
    package let detail: String?

    /// A libav error code (negative), with libav's own message when it logged one.
    package init(code: Int32, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    package var isEndOfFile: Bool { code == idm_error_eof() }
    package var isCancelled: Bool { code == idm_error_exit() }
    package var isInvalidArgument: Bool { code == -EINVAL }

    package var words: String {
        var buffer = [CChar](repeating: 0, count: 256)
        idm_error_string(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package var description: String {
        let words = words
        guard let detail, !detail.contains(words) else { return words }
        return "\(words) (\(detail))"
    }

    /// Throws for a negative libav return value.
    static func check(_ result: Int32) throws(AVError) {
        if result < 0 { throw AVError(code: result) }
    }
}
