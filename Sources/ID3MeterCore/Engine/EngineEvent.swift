/// The App SDK's event and error codes, reported through the engine's delegate.
public enum EngineEvent: Sendable, Equatable, CustomStringConvertible {
    case startup
    case shutdown
    case error(EngineError, String)

    /// The SDK's number for the event: 2001 startup, 2002 shutdown, 1001-1009 errors.
    public var code: Int {
        switch self {
        case .startup: 2001
        case .shutdown: 2002
        case .error(let error, _): error.rawValue
        }
    }

    public var description: String {
        switch self {
        case .startup: "2001 startup"
        case .shutdown: "2002 shutdown"
        case .error(let error, let detail): "\(error.rawValue) \(error): \(detail)"
        }
    }
}

/// The App SDK's error codes (1001-1009), as its documentation numbers them.
public enum EngineError: Int, Sendable, Equatable {
    case networkConnectionFailure = 1001
    case fileWriteFailure = 1002
    case fileReadFailure = 1003
    case emptyValue = 1004
    case emptyAppName = 1005
    case emptyAppVersion = 1006
    case emptyAppID = 1007
    case exception = 1008
    case unknownException = 1009
}
