#if canImport(Glibc)
import Glibc
#endif

/// `<socket>.lock`: the exclusive `flock` under which a daemon probes, replaces and finally
/// removes its socket file, so that two daemons starting (or one starting while another
/// stops) take turns.
///
/// The lock file is removed on a clean exit, so nothing is left beside the socket. Removing a
/// lock file is safe only with one more step when taking it: a daemon that waited on the old
/// file's lock while it was being removed would otherwise hold a lock on a file no longer
/// there while a third daemon locks a new one. So `acquire` checks, once it holds the lock,
/// that the path still names the file it locked, and starts again when it does not.
enum SocketLock {
    /// How many times a lock whose file vanished while it was awaited is taken again (each
    /// retry means another daemon removed it on exit: this never loops in practice).
    static let attempts = 64

    /// The lock file's path for a socket path.
    static func path(for socketPath: String) -> String { socketPath + ".lock" }

    /// Takes the lock for `socketPath`, waiting while another process holds it; the returned
    /// descriptor holds it until closed.
    static func acquire(_ socketPath: String) throws(DaemonStartError) -> CInt {
        let lockPath = path(for: socketPath)
        for _ in 0..<attempts {
            let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw .system(call: "open", path: lockPath, errno: errno) }
            guard flock(fd, LOCK_EX) == 0 else {
                let code = errno
                close(fd)
                throw .system(call: "flock", path: lockPath, errno: code)
            }
            var held = stat()
            var named = stat()
            if fstat(fd, &held) == 0, stat(lockPath, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino {
                return fd
            }
            close(fd)  // removed by a daemon that exited while we waited: lock the new file
        }
        throw .system(call: "flock", path: lockPath, errno: EAGAIN)
    }

    /// Removes the lock file; call it while holding the lock (with the descriptor `acquire`
    /// returned still open).
    static func remove(_ socketPath: String) {
        unlink(path(for: socketPath))
    }
}
