import Glibc

/// Whether a path given on the command line can be written, told without writing anything:
/// a usage error must leave no folder made and no file truncated. Only a first look (root may
/// pass `access` where a write then fails): the command makes the file when it runs.
enum WritablePath {
    /// An existing file or folder that may be written, or, for one that does not exist yet, the
    /// nearest existing folder above it.
    static func isWritable(_ path: String) -> Bool {
        var candidate = path.isEmpty ? "." : path
        while access(candidate, F_OK) != 0 {
            guard let slash = candidate.lastIndex(of: "/") else { return access(".", W_OK) == 0 }
            candidate = slash == candidate.startIndex ? "/" : String(candidate[..<slash])
        }
        return access(candidate, W_OK) == 0
    }
}
