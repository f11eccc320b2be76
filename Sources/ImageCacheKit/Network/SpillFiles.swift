#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLinux

/// The files large bodies spill to, reused instead of created and deleted per body. Creating a
/// file allocates an inode, and on a file system with much recent churn ext4's allocator
/// searched for one for up to a millisecond of kernel time (measured: a third of the daemon's
/// file creations on a cold prefetch were spill files); emptying a file it already has costs a
/// truncate, and the blocks of a body truncated before writeback are never allocated at all.
///
/// A body names its file by path (its consumer reads it there), and holds no descriptor once
/// complete: a prefetch of thousands of URLs may have as many bodies waiting for the decode
/// budget, and each open descriptor would count against the daemon's limit. So each file is
/// also known by its `FileIdentity` (device, inode and birth time), taken when it was made: a
/// file given back is reopened without following symlinks and emptied only if it is provably
/// still that file, and an idle file is handed out only while its path still leads to it. An
/// inode number alone would not do: a file deleted from outside frees its number for the next
/// file made, often at once. Where the file system records no birth time, nothing proves a
/// written file is still the one made (its change time moves with every write), so files are
/// not reused there: each is deleted when given back, as before reuse. Idle files (at most
/// `idleLimit`, each holding its descriptor) are emptied at once, so no disk space is held for
/// bodies already processed; the rest are deleted. Thread-safe: sinks take files on the curl
/// thread, consumers give them back from wherever they processed the body.
final class SpillFiles: Sendable {
    /// A spill file: an open descriptor (the taker's, to write and close) and its path (what a
    /// body names).
    struct File: Sendable {
        let fd: Int32
        let path: String
    }

    private struct Idle {
        let file: File
        let identity: FileIdentity
    }

    private struct State {
        /// Files handed out to bodies, by path.
        var issued: [String: FileIdentity] = [:]
        /// Emptied files ready for the next body, each with its descriptor open.
        var idle: [Idle] = []
        /// After `close()`: files given back are deleted, none are made.
        var closed = false

        /// Whether a file given back now may be kept.
        func keeps(limit: Int) -> Bool { !closed && idle.count < limit }
    }

    /// The folder the files are made in.
    let directory: String
    private let idleLimit: Int
    private let state = LockedState(State())

    /// Spill files made in `directory`, at most `idleLimit` of them kept while no body uses them.
    init(directory: String, idleLimit: Int = 16) {
        self.directory = directory
        self.idleLimit = idleLimit
    }

    deinit {
        state.withLock { s in
            for idle in s.idle { Self.delete(idle.file, identity: idle.identity) }
        }
    }

    /// An empty file positioned at its start, open for writing: an idle one, else a new one.
    /// The taker closes the descriptor when the body is complete. nil (with `errno` set) when
    /// a new one cannot be created, or after `close()`.
    func take() -> File? {
        while true {
            let reused: Idle?? = state.withLock { s in
                if s.closed { return .some(nil) }
                guard let idle = s.idle.popLast() else { return nil }
                return .some(idle)
            }
            guard let reused else { break }
            guard let idle = reused else {
                errno = ECANCELED
                return nil
            }
            // A file whose path no longer leads to it (the folder was removed or emptied from
            // outside) is dropped, never written to: its body would be read from the path.
            guard idle.identity.isStill(atPath: idle.file.path) else {
                Glibc.close(idle.file.fd)
                continue
            }
            state.withLock { $0.issued[idle.file.path] = idle.identity }
            return idle.file
        }
        var template = Array("\(directory)/imagecached-body-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkostemp($0.baseAddress!, O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let identity = FileIdentity.look(fd: fd)?.identity else {
            let code = errno
            Glibc.close(fd)
            unlink(path)
            errno = code
            return nil
        }
        state.withLock { $0.issued[path] = identity }
        return File(fd: fd, path: path)
    }

    /// Gives back the file at `path` once its body is no longer needed (its taker's descriptor
    /// closed): emptied and kept for the next body, or deleted when enough are idle. A path
    /// this pool did not hand out (a resumed download's own file) is not its to touch: false,
    /// and nothing happens. Whatever now sits at a path that no longer holds the pool's file
    /// is left alone.
    @discardableResult
    func giveBack(_ path: String) -> Bool {
        let handedBack: (FileIdentity, keep: Bool)? = state.withLock { s in
            guard let identity = s.issued.removeValue(forKey: path) else { return nil }
            return (identity, s.keeps(limit: idleLimit))
        }
        guard let (identity, keep) = handedBack else { return false }
        guard keep, identity.born != nil else {
            // Without a birth time the file cannot be proved ours after its writes; the name
            // is the pool's own in the engine's folder, so it goes, as every body's did.
            if identity.born == nil || identity.isStill(atPath: path) { unlink(path) }
            return true
        }
        let fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return true }
        let file = File(fd: fd, path: path)
        guard let look = FileIdentity.look(fd: fd), identity.confirms(look.identity), ftruncate(fd, 0) == 0 else {
            Glibc.close(fd)
            return true
        }
        let kept = state.withLock { s in
            guard s.keeps(limit: idleLimit) else { return false }
            s.idle.append(Idle(file: file, identity: identity))
            return true
        }
        if !kept { Self.delete(file, identity: identity) }
        return true
    }

    /// Deletes the idle files and stops keeping any (the engine shut down); files still
    /// handed out are deleted as they come back.
    func close() {
        let idle = state.withLock { s in
            s.closed = true
            defer { s.idle = [] }
            return s.idle
        }
        for each in idle { Self.delete(each.file, identity: each.identity) }
    }

    /// Files kept idle now (for tests and the engine's own accounting).
    var idleCount: Int { state.withLock { $0.idle.count } }

    /// Closes a file and deletes it, if its path still leads to it.
    private static func delete(_ file: File, identity: FileIdentity) {
        Glibc.close(file.fd)
        if identity.isStill(atPath: file.path) { unlink(file.path) }
    }
}
