#if canImport(Glibc)
import Glibc
#endif

/// The process's open-file limit.
enum DescriptorLimit {
    /// Raises the soft limit to the hard one, as a server that holds thousands of channels and
    /// API connections needs: a soft limit of 1,024 would have `accept` fail, and then even
    /// `/healthz` go unanswered, long before `--api-max-connections` is reached.
    static func raise() {
        var limit = rlimit()
        guard getrlimit(openFiles, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(openFiles, &limit)
    }

    /// RLIMIT_NOFILE, which Glibc imports as a case of the enum __rlimit_resource.
    private static let openFiles = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
}
