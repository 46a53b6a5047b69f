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
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(RLIMIT_NOFILE_VALUE, &limit)
    }

    /// Glibc imports RLIMIT_NOFILE as an enum case of __rlimit_resource.
    private static let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
}
