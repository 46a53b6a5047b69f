/// What is wrong with a line-up config, and where: the file, the line, the field.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    /// 1-based; `nil` when the whole file is at fault (it cannot be read, say).
    public var line: Int?
    /// The field's path, like `channels[2].fps`.
    public var field: String?
    public var reason: String

    public var description: String {
        [file, line.map(String.init), field].compactMap { $0 }.joined(separator: ":") + ": " + reason
    }
}
