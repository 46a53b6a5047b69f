/// The frame clock's rate, from the best declaration the stream makes (DOMAIN.md): the
/// variant's FRAME-RATE, else the video stream's average frame rate, else the user's `--fps`,
/// else 30000/1001 with a warning.
public struct FrameRateChoice: Sendable, Equatable {
    public enum Origin: String, Sendable {
        case variant = "the variant's FRAME-RATE"
        case video = "the video stream's average frame rate"
        case option = "--fps"
        case fallback = "no declared frame rate; assuming 30000/1001"
    }

    public static let fallbackRate = 30_000.0 / 1_001

    public var framesPerSecond: Double
    public var origin: Origin

    public init(info: SourceInfo?, option: Double?) {
        if let rate = info?.variantFrameRate, rate > 0 {
            (framesPerSecond, origin) = (rate, .variant)
        } else if let rate = info?.videoFrameRate, rate > 0 {
            (framesPerSecond, origin) = (rate, .video)
        } else if let option, option > 0 {
            (framesPerSecond, origin) = (option, .option)
        } else {
            (framesPerSecond, origin) = (Self.fallbackRate, .fallback)
        }
    }
}
