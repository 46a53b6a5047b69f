import CID3MeterShim

/// Why one attempt at reading a resource failed.
public enum FetchError: Error, Sendable, Equatable, CustomStringConvertible {
    case libav(AVError)
    /// More bytes than `FetchLimits` allows, counted or declared (Content-Length) before reading.
    case tooLarge(FetchLimits.Resource, limit: Int, declared: Int64?)
    /// The fetch's overall deadline passed.
    case deadline(Double)
    /// The resource ended before the sub-range the playlist gives.
    case shortRange(ByteRange, got: Int)

    var isCancelled: Bool { if case .libav(let error) = self { error.isCancelled } else { false } }

    /// A failure the same server may not repeat: a 404 at a live edge, a 503, a dropped connection.
    /// Not a cancel, and not EINVAL: libavformat's answer to a URL or redirect it refuses.
    var isWorthRetrying: Bool {
        if case .libav(let error) = self { !error.isCancelled && !error.isInvalidArgument } else { false }
    }

    public var description: String {
        switch self {
        case .libav(let error) where error.isInvalidArgument && error.detail == nil:
            "\(error) (libavformat refused to open it; a redirect off http(s) is refused this way)"
        case .libav(let error): "\(error)"
        case .tooLarge(let resource, let limit, let declared):
            (declared.map { "declares \($0) bytes, " } ?? "") + "more than the \(Self.size(limit)) allowed for \(resource.article) \(resource.name) (\(resource.option))"
        case .deadline(let seconds): "not complete after \(Self.seconds(seconds)) s, its deadline (--fetch-deadline)"
        case .shortRange(let range, let got): "the resource ends \(got) bytes into the sub-range \(range) (EXT-X-BYTERANGE)"
        }
    }

    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MB" : bytes >= 1 << 10 && bytes % (1 << 10) == 0 ? "\(bytes >> 10) KB" : "\(bytes) bytes"
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// A fetch that failed for good: the last attempt's error, after how many tries.
public struct FetchFailure: Error, Sendable, CustomStringConvertible {
    public var error: FetchError
    public var attempts: Int

    public var description: String { attempts > 1 ? "\(error) (after \(attempts) attempts)" : "\(error)" }
}
