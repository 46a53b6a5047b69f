/// The App SDK's event and error codes, as the reference engine writes them in event records.
package enum EngineEvent: Sendable, Equatable, CustomStringConvertible {
    case startup
    case shutdown
    case error(EngineEvent.ErrorCode, String)

    /// The SDK's number for the event: 2001 startup, 2002 shutdown, 1001-1009 errors.
    package var code: Int {
        switch self {
        case .startup: 2001
        case .shutdown: 2002
        case .error(let error, _): error.rawValue
        }
    }

    package var description: String {
        switch self {
        case .startup: "2001 startup"
        case .shutdown: "2002 shutdown"
        case .error(let error, let detail): "\(error.rawValue) \(error): \(detail)"
        }
    }
}

extension EngineEvent {
    /// The App SDK's error codes (1001-1009), as its documentation numbers them.
    package enum ErrorCode: Int, Sendable, Equatable {
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
}
