/// What is wrong with a line-up config or a token file, and where: the file, the line, the field.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    /// 1-based; `nil` when the whole file is at fault (it cannot be read, say).
    public var line: Int?
    /// The field's path, like `channels[2].fps`.
    public var field: String?
    public var reason: Reason

    public init(file: String, line: Int? = nil, field: String? = nil, reason: Reason) {
        self.file = file
        self.line = line
        self.field = field
        self.reason = reason
    }

    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        case unreadable(String?)
        case tooLarge(bytes: Int, maximum: Int)
        case notUTF8
        case empty
        case notYAML(String)
        case missing
        case givenTwice
        case notAField(allowed: [String])
        /// A value of the wrong shape or out of range: what it must be.
        case mustBe(String)
        case tooManyChannels(Int, maximum: Int)
        /// A channel name already used by the channel on `line`.
        case nameTaken(String, line: Int)
        /// A value refused for what it says (a host, an input, a header): why.
        case refused(String)
        case tokenTooShort(String, minimum: Int)
        case tokenNameTwice(String)
        case noToken

        public var description: String {
            switch self {
            case .unreadable(let why): why.map { "cannot read: \($0)" } ?? "cannot be read"
            case .tooLarge(let bytes, let maximum): "is \(bytes) bytes; at most \(maximum) are read"
            case .notUTF8: "is not UTF-8 text"
            case .empty: "is empty"
            case .notYAML(let problem): "is not valid YAML: \(problem)"
            case .missing: "is missing"
            case .givenTwice: "is given twice"
            case .notAField(let allowed): "is not a field here (fields: \(allowed.joined(separator: ", ")))"
            case .mustBe(let shape): "must be \(shape)"
            case .tooManyChannels(let count, let maximum): "has \(count) entries; at most \(maximum)"
            case .nameTaken(let name, let line): "'\(name)' is already the name of the channel on line \(line)"
            case .refused(let why): why
            case .tokenTooShort(let name, let minimum): "token '\(name)' is shorter than \(minimum) characters"
            case .tokenNameTwice(let name): "token name '\(name)' is given twice"
            case .noToken: "holds no token"
            }
        }
    }

    public var description: String {
        [file, line.map(String.init), field].compactMap { $0 }.joined(separator: ":") + ": \(reason)"
    }
}
