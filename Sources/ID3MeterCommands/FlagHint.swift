import ID3Meter

/// The flag that sets the limit a failure ran into. The library's words name no flag (a
/// backend has none); the command line's do, so that the user sees what to change.
enum FlagHint {
    /// `failure` in words, followed by the flag that sets its limit when there is one.
    static func words(_ failure: InputFailure) -> String {
        flag(for: failure).map { "\(failure) (\($0))" } ?? "\(failure)"
    }

    static func flag(for failure: InputFailure) -> String? {
        switch failure.kind {
        case .gaveUp, .lostInARow: "--max-lost-segments"
        default: failure.fetchFailure.flatMap { flag(for: $0.error) }
        }
    }

    private static func flag(for error: FetchError) -> String? {
        switch error {
        case .idle: "--timeout"
        case .deadline: "--fetch-deadline"
        case .tooLarge(.playlist, _, _): "--max-playlist-size"
        case .tooLarge(.segment, _, _): "--max-segment-size"
        case .tooLarge(.key, _, _): "--max-key-size"
        case .tooLarge(.initSection, _, _): "--max-init-size"
        case .tls(let failure) where failure.reason == .unknownAuthority: "trust its authority with --ca-file, or ca_file in a line-up"
        case .tls(let failure) where failure.reason == .clientCertificateRefused: "--client-cert and --client-key, or client_cert in a line-up"
        default: nil
        }
    }
}
