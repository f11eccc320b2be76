#if canImport(Glibc)
import Glibc
#endif
import ImageCacheKit

/// Why the daemon could not start serving. Each message says what to do about it, since
/// it is what an operator reads on stderr before the process exits non-zero.
public enum DaemonStartError: Error, Sendable, CustomStringConvertible {
    /// A live process answers on the socket path: it is never replaced.
    case socketInUse(path: String)
    /// Something that is not a socket sits at the socket path: it is never deleted.
    case notASocket(path: String)
    /// The path does not fit in `sockaddr_un` (108 bytes on Linux).
    case socketPathTooLong(path: String)
    /// `socket_group` names no group of this system.
    case unknownGroup(String)
    /// `admin_group` names no group of this system.
    case unknownAdminGroup(String)
    /// The socket inherited from systemd is unusable.
    case badInheritedSocket(String)
    /// The cache folder is held by another daemon, or cannot be opened.
    case cacheUnavailable(CacheOpenError)
    /// Another process holds the lock of this cache folder's download job table in
    /// `state_dir` (the message names the table and the key to change).
    case jobTableInUse(String)
    /// A system call failed.
    case system(call: String, path: String?, errno: Int32)
    /// `metrics_listen` could not be bound (address in use, not this host's, no permission).
    case metricsUnavailable(address: String, reason: String)

    /// Whether the configuration caused it (a path or group it names is unusable, or
    /// something the daemon may not remove stands where it must create a file), so the
    /// process exits 78 (EX_CONFIG) and systemd does not restart it in a loop; false for a
    /// state of the system (another daemon on the socket or the cache, a failed call).
    public var isConfigurationError: Bool {
        switch self {
        case .notASocket, .socketPathTooLong, .unknownGroup, .unknownAdminGroup, .metricsUnavailable: true
        case .cacheUnavailable(.inTheWay): true
        case .socketInUse, .badInheritedSocket, .cacheUnavailable, .jobTableInUse, .system: false
        }
    }

    /// The message printed before exiting: what is wrong and what to do.
    public var description: String {
        switch self {
        case .socketInUse(let path):
            return "another daemon is already serving on \(path); stop it first, or choose another path with --socket or `socket =` in cache.conf"
        case .notASocket(let path):
            return "\(path) exists and is not a socket; refusing to replace it (remove it or choose another socket path)"
        case .socketPathTooLong(let path):
            return "the socket path \(path) is longer than a Unix socket address allows (107 bytes)"
        case .unknownGroup(let name):
            return "socket_group \"\(name)\" is not a group on this system"
        case .unknownAdminGroup(let name):
            return "admin_group \"\(name)\" is not a group on this system"
        case .badInheritedSocket(let why):
            return "the socket passed by systemd is unusable: \(why)"
        case .cacheUnavailable(let error):
            return error.description
        case .jobTableInUse(let message):
            return message
        case .metricsUnavailable(let address, let reason):
            return "metrics_listen \(address) cannot be served (\(reason)); choose another address or leave metrics_listen empty"
        case .system(let call, let path, let code):
            let reason = String(cString: strerror(code))
            if let path { return "\(call) \(path): \(reason)" }
            return "\(call): \(reason)"
        }
    }
}
