/// The App SDK's states and the calls that move between them (docs/DTVR.md). A call a state
/// does not expect is ignored and logged, as the SDK does.
package enum EngineState: String, Sendable {
    /// Before the app info is checked.
    case initial
    /// Ready for `play`.
    case idle
    /// Playing: takes metadata, tags and playhead positions.
    case processing
    /// Off: after bad app info or `disable`, until `enable`.
    case disabled
}

/// The calls the state table knows.
package enum EngineCall: String, Sendable, CaseIterable {
    case play, loadMetadata, sendID3, playheadPosition, stop, end, disable, enable
}

extension EngineState {
    /// The state after `call`, or `nil` when this state does not expect it.
    public func after(_ call: EngineCall) -> EngineState? {
        switch (self, call) {
        case (.idle, .play), (.idle, .loadMetadata): .processing
        // Metadata starts each asset, and a session may hold several; the SDK takes it while processing.
        case (.processing, .loadMetadata), (.processing, .sendID3), (.processing, .playheadPosition): .processing
        case (.processing, .stop), (.processing, .end): .idle
        case (.idle, .disable): .disabled
        case (.disabled, .enable): .idle
        default: nil
        }
    }
}
