#if canImport(Glibc)
import Glibc
#endif
import ImageCacheKit
import Logging

/// Creates the daemon's socket at its path without ever taking over a live daemon's.
///
/// NIO's `cleanupExistingSocketFile` would unlink whatever is at the path, including the
/// socket of a daemon that is serving, which then loses all its future clients. Instead,
/// under an exclusive `flock` on `<socket>.lock` (so two daemons starting together take
/// turns), the path is probed: a socket that accepts a connection belongs to a live daemon
/// and start-up fails; one that refuses is stale and is removed; anything that is not a
/// socket is left alone and start-up fails. The lock is held until the server listens, and
/// taken again at a clean exit to remove the socket and the lock file (`SocketLock`).
///
/// The socket is created 0600 (0660 and group-owned with `socket_group`): the mode is set on
/// the socket before `bind`, which Linux applies to the new file, so it is never more open
/// than intended, even for an instant.
public enum SocketBinder {
    /// Binds a new socket at `path`. The returned socket is not yet listening; the server's
    /// bound-socket bootstrap does that, after which `releaseLock()` must be called.
    public static func bind(path: String, group: String?, logger: Logger) throws(DaemonStartError) -> ListeningSocket {
        let address = try UnixAddress(path: path)
        let groupID = try group.map { name throws(DaemonStartError) in try lookUpGroup(name) }
        let mode: mode_t = groupID == nil ? 0o600 : 0o660

        try createParentDirectory(of: path)
        let lock = try SocketLock.acquire(path)
        var keepLock = false
        defer { if !keepLock { close(lock) } }

        try removeStaleSocket(at: path, address: address, logger: logger)

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket", path: nil, errno: errno) }
        var keepSocket = false
        defer { if !keepSocket { close(fd) } }
        // On Linux the socket inode's mode (minus the umask) becomes the file's mode at bind.
        _ = fchmod(fd, 0o600)
        let bound = address.withSockAddr { Glibc.bind(fd, $0, $1) }
        guard bound == 0 else { throw .system(call: "bind", path: path, errno: errno) }
        if let groupID {
            guard chown(path, uid_t.max, groupID) == 0 else {
                let code = errno
                unlink(path)
                throw .system(call: "chown", path: path, errno: code)
            }
        }
        guard chmod(path, mode) == 0 else {
            let code = errno
            unlink(path)
            throw .system(call: "chmod", path: path, errno: code)
        }
        // Recorded after the last chown/chmod, which change the file's change time.
        guard let identity = FileIdentity.look(atPath: path)?.identity else {
            throw .system(call: "stat", path: path, errno: errno)
        }
        keepSocket = true
        keepLock = true
        return ListeningSocket(descriptor: fd, path: path, isInherited: false, createdFile: identity, lockDescriptor: lock)
    }

    /// What is at a socket path right now, as far as a client can tell.
    public enum Probe: Sendable, Equatable {
        case absent
        /// A socket file nobody listens on (a daemon that died without cleaning up).
        case stale
        /// A process accepts connections there.
        case live
        case notASocket
    }

    /// Looks at `path` without changing anything.
    public static func probe(path: String) throws(DaemonStartError) -> Probe {
        try probe(path: path, address: UnixAddress(path: path))
    }

    private static func probe(path: String, address: UnixAddress) throws(DaemonStartError) -> Probe {
        var info = stat()
        if lstat(path, &info) != 0 {
            if errno == ENOENT { return .absent }
            throw .system(call: "stat", path: path, errno: errno)
        }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else { return .notASocket }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket", path: nil, errno: errno) }
        defer { close(fd) }
        let result = address.withSockAddr { connect(fd, $0, $1) }
        if result == 0 { return .live }
        switch errno {
        case EAGAIN, EINPROGRESS:
            // The listener's backlog is full: it is alive, just busy.
            return .live
        case ECONNREFUSED:
            return .stale
        default:
            throw .system(call: "connect", path: path, errno: errno)
        }
    }

    private static func removeStaleSocket(at path: String, address: UnixAddress, logger: Logger) throws(DaemonStartError) {
        switch try probe(path: path, address: address) {
        case .absent:
            return
        case .live:
            throw .socketInUse(path: path)
        case .notASocket:
            throw .notASocket(path: path)
        case .stale:
            guard unlink(path) == 0 || errno == ENOENT else { throw .system(call: "unlink", path: path, errno: errno) }
            logger.notice("removed a stale socket left by a daemon that is no longer running", metadata: ["socket": "\(path)"])
        }
    }

    /// Creates the socket's folder (0700) when it does not exist, as `$XDG_RUNTIME_DIR/…` or
    /// `/run/imagecached` may not yet; an existing folder is left as it is.
    private static func createParentDirectory(of path: String) throws(DaemonStartError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let parent = String(path[..<slash])
        if mkdir(parent, 0o700) != 0, errno != EEXIST {
            throw .system(call: "mkdir", path: parent, errno: errno)
        }
    }

    /// A group by name, or by number when the name is all digits.
    static func lookUpGroup(_ name: String) throws(DaemonStartError) -> gid_t {
        guard let id = SystemGroup.id(named: name) else { throw .unknownGroup(name) }
        return gid_t(id)
    }
}
