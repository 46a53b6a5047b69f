/// What the frame clock did, for a caller that watches playback: the rate it chose, how late
/// each `sendID3` came, and how long the buffer ran dry.
public enum PlaybackEvent: Sendable, Equatable {
    case frameRate(FrameRateChoice)
    /// A `sendID3` call, `lateness` seconds of the feeder's clock after the frame that brought its
    /// tag due: the pacing error (a timer's wake-up delay, a busy process).
    case delivered(lateness: Double)
    /// The buffer ran dry for `seconds` of the feeder's clock (a live stall), and media came again.
    case stalled(seconds: Double)
}
