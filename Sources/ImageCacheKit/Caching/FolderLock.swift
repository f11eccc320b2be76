import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The exclusive `flock` on a cache folder's `lock` file, held for the cache's lifetime.
///
/// Two daemons writing one folder would corrupt each other's index and evict each other's
/// files; the contract asks the second to fail with a clear message instead. `flock` is
/// released by the kernel when the process dies (even by `kill -9`), so a stale lock can
/// never block a restart. Locks belong to the open file description, so a second open in
/// the same process is refused too (which is what the tests rely on).
///
/// A refusal is retried for a quarter of a second before it counts: a process that spawns a
/// child shares the lock's file description with it from fork until exec (close-on-exec acts
/// only then), so a lock released just before could still look held for that moment.
///
/// The lock goes with its last reference too, so a holder dropped without `release()` never
/// keeps the folder from its next owner.
final class FolderLock: Sendable {
    /// How long a held lock is retried before the folder counts as in use.
    static let patience: Duration = .milliseconds(250)

    private let descriptor: Int32
    /// Set by the first `release()`: the descriptor is closed once, never a number reused since.
    private let released = Atomic<Bool>(false)

    /// Takes the lock, or throws `folderInUse` when another holder has it.
    /// - Parameter refused: called after each attempt that found the lock held and will be
    ///   retried (tests release their own hold on it then).
    init(lockFile: String, folder: String, refused: (() -> Void)? = nil) throws(CacheOpenError) {
        // O_NOFOLLOW: a symlink at the lock's name would have the lock made (or a file
        // created) wherever it points; it is refused (ELOOP) instead.
        let fd = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            throw .fileSystem(CacheFileSystemError(operation: "open", path: lockFile, code: errno))
        }
        let deadline = ContinuousClock.now + Self.patience
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK, ContinuousClock.now < deadline {
                refused?()
                usleep(10_000)
                continue
            }
            close(fd)
            if code == EWOULDBLOCK { throw .folderInUse(path: folder) }
            throw .fileSystem(CacheFileSystemError(operation: "flock", path: lockFile, code: code))
        }
        descriptor = fd
    }

    /// Whether a live process holds the lock of `lockFile` now (a daemon runs on the folder),
    /// found without creating the file or disturbing the holder: a shared lock tried once and
    /// dropped at once. False when the file does not exist or nobody holds it.
    static func isHeld(lockFile: String) -> Bool {
        let fd = open(lockFile, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        while flock(fd, LOCK_SH | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            return errno == EWOULDBLOCK
        }
        return false
    }

    /// Releases the lock (closing the descriptor drops it); later calls do nothing.
    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        close(descriptor)
    }

    deinit {
        release()
    }
}
