import CID3MeterShim
import Glibc

/// Why one attempt at reading a resource failed: a value that says what happened, matched on
/// by callers and tests, and put in words by `description`.
public enum FetchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with a status other than 2xx (or a redirect without a Location).
    case http(status: Int, reason: String)
    /// No connection, or it broke: refused, reset, TLS, DNS, closed early.
    case connection(String)
    /// Nothing came for this many seconds (the fetcher's `ioTimeout`).
    case idle(Double)
    /// A redirect that was not followed: off http(s), or too many.
    case redirect(String)
    /// A host the fetcher's `Fetcher.HostRule` does not let it reach.
    case refused(String)
    /// A local file that could not be opened or read.
    case file(errno: Int32)
    /// A stream libavformat reads (udp, srt, rtp, tcp) failed: its error code (a negative
    /// errno or an `AVERROR`) and libav's own last line about it.
    case libav(code: Int32, detail: String?)
    /// More bytes than `Fetcher.Limits` allows, counted or declared (Content-Length) before reading.
    case tooLarge(Fetcher.Limits.Resource, limit: Int, declared: Int64?)
    /// The fetch's overall deadline passed.
    case deadline(Double)
    /// The resource ended `got` bytes into the sub-range the playlist gives (`EXT-X-BYTERANGE`
    /// `length@offset`).
    case shortRange(length: Int, offset: Int, got: Int)
    /// A body whose `Content-Encoding` could not be undone: one zlib does not read (its name),
    /// or (`nil`) bytes that are not the gzip or deflate they were said to be.
    case encoding(String?)
    /// The HTTPS connection was refused: whose certificate, and what was wrong.
    case tls(FetchError.TLSFailure)
    case cancelled

    public var isCancelled: Bool {
        switch self {
        case .cancelled: true
        case .libav(let code, _): AVError(code: code).isCancelled
        default: false
        }
    }

    /// A failure the same server may not repeat: a 404 at a live edge, a 503, a dropped
    /// connection, a stall. Not a cancel, a refused redirect, a local file, a size over the limit
    /// or a deadline (a trickle tried again would take it again); not EINVAL, libavformat's
    /// answer to a URL it refuses.
    public var isWorthRetrying: Bool {
        switch self {
        case .http, .connection, .idle, .shortRange: true
        case .libav(let code, _): !AVError(code: code).isCancelled && !AVError(code: code).isInvalidArgument
        case .redirect, .refused, .file, .tooLarge, .deadline, .encoding, .tls, .cancelled: false
        }
    }

    public var description: String {
        switch self {
        case .http(let status, let reason): "HTTP \(status)\(reason.isEmpty ? "" : " \(reason)")"
        case .connection(let reason): reason
        case .idle(let seconds): "no data for \(Self.seconds(seconds)) s"
        case .redirect(let reason), .refused(let reason): reason
        case .file(let code): String(cString: strerror(code))
        case .libav(let code, nil) where AVError(code: code).isInvalidArgument:
            "\(AVError(code: code)) (libavformat refused to open it)"
        case .libav(let code, let detail): "\(AVError(code: code, detail: detail))"
        case .tooLarge(let resource, let limit, let declared):
            (declared.map { "declares \($0) bytes, " } ?? "") + "more than the \(Self.size(limit)) allowed for \(resource.article) \(resource.name)"
        case .deadline(let seconds): "not complete after \(Self.seconds(seconds)) s, its deadline"
        case .shortRange(let length, let offset, let got): "the resource ends \(got) bytes into the sub-range \(length)@\(offset) (EXT-X-BYTERANGE)"
        case .encoding(let name?): "sent with Content-Encoding '\(name)', which id3-meter cannot decode (it asks for \(ContentDecoding.accepted))"
        case .encoding(nil): "the body is not the gzip or deflate its Content-Encoding says"
        case .tls(let failure): failure.description
        case .cancelled: "cancelled"
        }
    }

    static func libav(_ error: AVError) -> FetchError { .libav(code: error.code, detail: error.detail) }

    static func shortRange(_ range: ByteRange, got: Int) -> FetchError { .shortRange(length: range.length, offset: range.offset, got: got) }

    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MB" : bytes >= 1 << 10 && bytes % (1 << 10) == 0 ? "\(bytes >> 10) KB" : "\(bytes) bytes"
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// A fetch that failed for good: the last attempt's error, after how many tries.
package struct FetchFailure: Error, Sendable, CustomStringConvertible {
    package var error: FetchError
    package var attempts: Int

    package init(error: FetchError, attempts: Int = 1) {
        self.error = error
        self.attempts = attempts
    }

    package var description: String { attempts > 1 ? "\(error) (after \(attempts) attempts)" : "\(error)" }
}

extension InputFailure {
    /// The failed fetch underneath, however deep: a bare one, or a playlist's or segment's.
    public var fetchError: FetchError? { fetchFailure?.error }

    /// The failed fetch with how many attempts it took.
    package var fetchFailure: FetchFailure? {
        switch kind.cause {
        case let failure as FetchFailure: failure
        case let error as SegmentLoadError: error.fetchFailure
        case let error as FetchError: FetchFailure(error: error)
        default: nil
        }
    }
}
