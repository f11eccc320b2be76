import CLinux
#if canImport(Glibc)
import Glibc
#endif
import ImageCacheProtocol

/// A download folder held open by descriptor, reached from a download root without following
/// a single symlink below that root.
///
/// Why a descriptor: a path is looked up again at every call, so a folder renamed and replaced
/// by a symlink while a job runs (or while the daemon is stopped) would redirect every later
/// write. Every filesystem step of a job (`.part`, placeholder, rename, unlink) is made
/// relative to `fd` with a single-component name, so it happens in the folder that was checked.
/// `recheck(roots:)` tells whether the path still leads to that same folder from a root of the
/// current configuration; a job whose folder left the roots fails `1010` instead of writing.
package final class DirectoryHandle: Sendable {
    /// The open folder (`O_DIRECTORY | O_RDONLY`), closed when the handle goes.
    public let fd: Int32
    /// Its canonical absolute path (as recorded in the job table and shown to clients).
    public let path: String
    /// The resolved root it lies beneath.
    public let root: String
    /// Which folder it is (`recheck` compares a reopened one with it).
    private let identity: FileIdentity

    private init(fd: Int32, path: String, root: String) throws(DownloadError) {
        guard let found = FileIdentity.look(fd: fd) else {
            let failure = DownloadError.storage("cannot read the download folder \(path)", errno: errno)
            close(fd)
            throw failure
        }
        self.fd = fd
        self.path = path
        self.root = root
        identity = found.identity
    }

    deinit { close(fd) }

    /// Opens `path` (canonical and absolute: no symlink, `.` or `..` in it) beneath the first of
    /// `roots` (resolved) that lexically contains it. With `create`, missing folders below the
    /// root are made one component at a time (`mkdirat` in the folder just opened).
    ///
    /// - Throws: `forbidden` (1010) when `path` lies under no root, or when any component below
    ///   the root is a symlink, `.`/`..`, or not a folder; `storage_unavailable` when the folder
    ///   is gone (and `create` is false) or cannot be made.
    public static func open(_ path: String, roots: [String], create: Bool,
                            walk: BeneathRoot.Walk = .automatic) throws(DownloadError) -> DirectoryHandle {
        guard let root = roots.first(where: { DownloadDestination.inside(path, root: $0) }) else {
            throw .outsideRoots(path, roots: roots, requested: false)
        }
        let relative = path == root ? [] : path.dropFirst(root == "/" ? 1 : root.count + 1).split(separator: "/").map(String.init)
        let rootFD = Glibc.open(root, O_DIRECTORY | O_RDONLY | O_CLOEXEC)
        guard rootFD >= 0 else {
            throw .storage("cannot open the download root \(root)", errno: errno)
        }
        let fd: Int32
        do {
            fd = try BeneathRoot.openDirectory(relative, in: rootFD, create: create, walk: walk, describing: path)
        } catch {
            close(rootFD)
            throw error
        }
        close(rootFD)
        return try DirectoryHandle(fd: fd, path: path, root: root)
    }

    /// Whether the folder is still where it was: its path, opened again beneath one of `roots`
    /// (the current configuration's, resolved) without following a symlink, is this very
    /// folder (same device and inode, and birth time where the file system keeps one: a
    /// folder removed and made again can get the old inode number).
    ///
    /// - Throws: `forbidden` (1010) saying why not: the folder is no longer under a root, a
    ///   symlink or a non-folder now stands in its path, it was replaced by another folder, or
    ///   it is gone; or the system's own failure to open it (`busy` when out of descriptors).
    package func recheck(roots: [String], walk: BeneathRoot.Walk = .automatic) throws(DownloadError) {
        let again: DirectoryHandle
        do {
            again = try DirectoryHandle.open(path, roots: roots, create: false, walk: walk)
        } catch {
            throw Self.reopenFailure(error, path: path)
        }
        guard identity.isSameFolder(again.identity) else {
            throw .folderReplaced(path)
        }
    }

    /// What a failed reopen of the folder at `path` means: a refusal stays one; a failure of
    /// the machine that says nothing of where the folder is (out of descriptors, a full or
    /// failing disk) keeps its own kind (`busy`, `storage_unavailable`), so that a job failing
    /// under load is not reported as a folder that left its root; anything else (missing, a
    /// non-folder in its path, a path the system cannot follow) is the folder gone (`forbidden`).
    static func reopenFailure(_ error: DownloadError, path: String) -> DownloadError {
        if error.kind == .forbidden || error.machineFailure != nil { return error }
        return .folderGone(path, cause: error)
    }

    /// Opens the file `name` in this folder for appending the body of a download: never
    /// following a symlink (`O_NOFOLLOW`), never creating it (the reservation did), and only a
    /// regular file with a single link (a hard link to a file elsewhere is refused too).
    /// Returns the descriptor (positioned at its end), or `-errno`.
    package func openForAppend(_ name: String) -> Int32 {
        let fd = openat(self.fd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return -errno }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            return -code
        }
        guard (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink == 1 else {
            close(fd)
            return -ELOOP
        }
        guard lseek(fd, 0, SEEK_END) >= 0 else {
            let code = errno
            close(fd)
            return -code
        }
        return fd
    }

    /// Opens the regular file `name` in this folder for reading (the verifier's reads, the
    /// fsync before the move), never through a symlink. Returns the descriptor, or `-errno`.
    package func openForReading(_ name: String) -> Int32 {
        let fd = openat(self.fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return -errno }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return -ELOOP
        }
        return fd
    }

    /// The opener of a transfer's partial file (`TransferRequest.Resume.open`), called at every
    /// attempt (the first and each retry, on the transfer thread): re-checks this folder against
    /// `roots()` (the current configuration's, resolved), then opens `name` beneath it with
    /// `openForAppend`. A folder that left the roots gives `-EXDEV`, a swapped `.part` `-ELOOP`;
    /// a folder that cannot be reopened for want of descriptors or by a disk failure gives that
    /// failure's own `-errno` (so the job fails `busy` or `storage_unavailable`, not `internal`).
    package func appendOpener(_ name: String, roots: @escaping @Sendable () -> [String]) -> @Sendable () -> Int32 {
        { [self] in
            do throws(DownloadError) {
                try recheck(roots: roots())
            } catch {
                return -(error.machineFailure ?? EXDEV)
            }
            return openForAppend(name)
        }
    }

    /// Flushes the folder's entries (after a rename or unlink in it), best effort.
    package func sync() {
        fsync(fd)
    }
}

/// How a path below a root is opened without following symlinks: `openat2(2)` with
/// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` where the kernel has it (5.6+), else one
/// `openat(O_NOFOLLOW | O_DIRECTORY)` per component, refusing `.` and `..`.
package enum BeneathRoot {
    /// Which way to walk (the fallback is forced in tests so both stay proven).
    package enum Walk: Sendable {
        /// `openat2` when the kernel has it, else component by component.
        case automatic
        /// Component by component with `O_NOFOLLOW` (kernels before 5.6).
        case componentWise
    }

    /// Whether this kernel has `openat2` (asked once).
    package static let kernelHasOpenat2: Bool = {
        let fd = ic_open_beneath(AT_FDCWD, ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC, 0)
        if fd >= 0 { close(fd) }
        return !(fd < 0 && errno == ENOSYS)
    }()

    /// Opens (creating when asked) the folder `components` below the open folder `base`.
    /// Returns a new descriptor; `base` stays open.
    static func openDirectory(_ components: [String], in base: Int32, create: Bool, walk: Walk,
                              describing path: String) throws(DownloadError) -> Int32 {
        if let bad = components.first(where: { $0.isEmpty || $0 == "." || $0 == ".." || $0.contains("/") }) {
            throw .climbsOutOfRoot(path, component: bad)
        }
        if walk == .automatic, kernelHasOpenat2 {
            let relative = components.isEmpty ? "." : components.joined(separator: "/")
            let fd = ic_open_beneath(base, relative, O_DIRECTORY | O_RDONLY | O_CLOEXEC, 0)
            if fd >= 0 { return fd }
            if errno != ENOENT || !create { throw refusal(path, errno: errno) }
            // Something is missing: make it one component at a time below.
        }
        var current = dup(base)
        guard current >= 0 else { throw .storage("cannot open the download folder \(path)", errno: errno) }
        for component in components {
            var next = openat(current, component, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0, errno == ENOENT, create {
                if mkdirat(current, component, 0o755) != 0, errno != EEXIST {
                    let failure = DownloadError.storage("cannot create the download folder \(path)", errno: errno)
                    close(current)
                    throw failure
                }
                next = openat(current, component, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            }
            if next < 0 {
                // `O_DIRECTORY | O_NOFOLLOW` on a symlink says ENOTDIR: tell the two apart.
                var code = errno
                var info = stat()
                if code == ENOTDIR, fstatat(current, component, &info, AT_SYMLINK_NOFOLLOW) == 0,
                   (info.st_mode & S_IFMT) == S_IFLNK {
                    code = ELOOP
                }
                let failure = refusal(path, errno: code)
                close(current)
                throw failure
            }
            close(current)
            current = next
        }
        return current
    }

    /// The error for a refused lookup: a symlink (`ELOOP`), an escape (`EXDEV`) or a file in the
    /// path (`ENOTDIR`) is `forbidden`; anything else keeps its storage kind.
    static func refusal(_ path: String, errno code: Int32) -> DownloadError {
        switch code {
        case ELOOP, EXDEV:
            return .symbolicLinkInPath(path)
        case ENOTDIR:
            return .notAFolder(path)
        default:
            return .storage("cannot open the download folder \(path)", errno: code)
        }
    }
}
