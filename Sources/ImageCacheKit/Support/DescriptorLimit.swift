#if canImport(Glibc)
import Glibc
#endif

/// The process's open-file limit, raised to what it is allowed.
///
/// systemd starts services with a soft limit of 1024 (for the sake of old `select()` users)
/// and a hard limit in the hundreds of thousands, and expects a program that needs more to
/// raise its own soft limit. The daemon needs more: client sockets, cache files handed out by
/// path, libcurl's connections and the sealed files of hot inline thumbnails
/// (`SealedMemoryFile`). Nothing in it uses `select()`.
///
/// Under the shipped system unit `SystemCallFilter=~@resources` refuses `setrlimit()`, so the
/// unit sets `LimitNOFILE=` itself; raising stays for every other way the daemon is started.
package enum DescriptorLimit {
    /// The soft limit below which the daemon warns at start (the units set 65536).
    package static let recommended = 4096

    /// Raises the soft limit to the hard one. Returns the soft limit in force afterwards, or
    /// nil when it could not be read.
    @discardableResult
    package static func raiseToHardLimit() -> Int? {
        guard var limit = current else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// Whether the process cannot open one more descriptor now (EMFILE/ENFILE), probed by
    /// opening `/dev/null`: how a failure that does not say why (curl's resolver could not make
    /// its socket pair) is told apart from a network that is down.
    package static var isExhausted: Bool {
        let probe = open("/dev/null", O_RDONLY | O_CLOEXEC)
        guard probe < 0 else {
            close(probe)
            return false
        }
        return errno == EMFILE || errno == ENFILE
    }

    /// The soft limit in force now, or nil when it cannot be read.
    package static var soft: Int? { current.map { Int(clamping: $0.rlim_cur) } }

    private static var current: rlimit? {
        var limit = rlimit()
        return getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? limit : nil
    }
}
