/// The frame clock's rate, from the best declaration the stream makes (docs/DTVR.md): the
/// variant's FRAME-RATE, else the video stream's average frame rate, else the caller's option,
/// else 30000/1001 with a warning.
public struct FrameRateChoice: Sendable, Equatable {
    /// Where the rate came from, in the order they are tried.
    public enum Origin: Sendable, CustomStringConvertible {
        case variant, video
        /// The rate the caller gave for a stream that declares none (the command line's `--fps`).
        case option
        case fallback

        public var description: String {
            switch self {
            case .variant: "the stream's declared frame rate"
            case .video: "the video stream's average frame rate"
            case .option: "the frame rate given"
            case .fallback: "no declared frame rate; assuming 30000/1001"
            }
        }
    }

    /// A declared rate passed over.
    public struct Rejection: Sendable, Equatable, CustomStringConvertible {
        public var origin: Origin
        public var framesPerSecond: Double

        public var description: String {
            // Where the rate is rejected, its value comes first: "FRAME-RATE inf is not ...".
            origin == .variant ? "the declared frame rate \(framesPerSecond) is not from 1 to 300 fps"
                : "\(origin) \(framesPerSecond) is not from 1 to 300 fps"
        }
    }

    /// When nothing declares a rate: NTSC's 29.97.
    public static let fallbackRate = 30_000.0 / 1_001
    /// Rates a frame clock may run at: a declared rate outside them is a mistake (or an attack:
    /// `inf` has no frame duration, `1e-300` would never reach a tag), so the next choice is taken.
    public static let allowedRates = 1.0...300.0

    public var framesPerSecond: Double
    public var origin: Origin
    /// Declared rates passed over because they were out of `allowedRates`.
    public var rejected: [Rejection] = []

    /// The first allowed rate of: the variant's `FRAME-RATE`, the video's probed rate, `option`
    /// (the caller's); else `fallbackRate`.
    public init(info: SourceInfo?, option: Double?) {
        let candidates: [(Double?, Origin)] = [(info?.variantFrameRate, .variant), (info?.videoFrameRate, .video), (option, .option)]
        for case let (rate?, origin) in candidates {
            if Self.allowedRates.contains(rate) {
                (framesPerSecond, self.origin) = (rate, origin)
                return
            }
            rejected.append(Rejection(origin: origin, framesPerSecond: rate))
        }
        (framesPerSecond, origin) = (Self.fallbackRate, .fallback)
    }
}
