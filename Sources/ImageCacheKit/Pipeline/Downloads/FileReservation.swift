import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImageCacheProtocol

/// The final name of a download, held from the moment the job starts by an empty file
/// created exclusively (`O_CREAT|O_EXCL`), beside the `<name>.part` that receives the body.
///
/// Why a placeholder: two jobs (or a user and a job) asking for `photo.jpg` at once must end
/// with `photo.jpg` and `photo (1).jpg`, never one file replacing the other. Why link + unlink
/// to finish: `link(2)` fails with `EEXIST` when anything appeared at the name meanwhile, so
/// the finished body never replaces a file the daemon did not create (the portable form of
/// `renameat2(RENAME_NOREPLACE)`, which Glibc's Swift module does not expose).
public struct FileReservation: Sendable, Codable, Hashable {
    /// The resolved folder.
    public var directory: String
    /// The name before any ` (n)` and extension.
    public var stem: String
    /// The extension without its dot, nil for none.
    public var ext: String?
    /// 0 for the plain name, n for `stem (n).ext`.
    public var number: Int
    /// The placeholder's inode (so only our own placeholder is ever removed); nil when
    /// `overwrite` kept an existing file at the name.
    public var inode: UInt64?
    /// The `.part` file's inode: after the move it is the final file's, which is how a job whose
    /// move happened but whose table entry was not saved (a stop or crash in between) finds its
    /// file again instead of downloading it twice (`committedFile`).
    public var partInode: UInt64?

    /// The highest ` (n)` tried before giving up.
    static let maxNumber = 9999

    /// The file name, numbered when needed.
    public var name: String {
        let base = number == 0 ? stem : "\(stem) (\(number))"
        return ext.map { base + "." + $0 } ?? base
    }

    /// The final path.
    public var path: String { directory + "/" + name }
    /// Where the body is written until it is verified.
    public var partPath: String { path + ".part" }

    /// Reserves the first free name among `stem.ext`, `stem (1).ext`, … in `directory` and
    /// creates its empty `.part`. With `overwrite`, the plain name is taken even when a file
    /// holds it (that file is replaced only when the body is complete and verified).
    ///
    /// - Throws: `forbidden` when the folder refuses new files (permissions, read-only).
    public static func reserve(directory: String, stem: String, ext: String?, overwrite: Bool) throws(RPCError) -> FileReservation {
        var candidate = FileReservation(directory: directory, stem: stem, ext: ext, number: 0, inode: nil, partInode: nil)
        while candidate.number <= maxNumber {
            defer { candidate.number += 1 }
            if overwrite, candidate.number == 0, let existing = FileOps.lstatMode(candidate.path) {
                // Replace only a regular file or a symlink (the link itself, never its target).
                if existing == S_IFREG || existing == S_IFLNK, let partInode = try FileOps.createPlaceholder(candidate.partPath) {
                    candidate.partInode = partInode
                    return candidate
                }
                continue
            }
            guard let inode = try FileOps.createPlaceholder(candidate.path) else { continue }
            guard let partInode = try FileOps.createPlaceholder(candidate.partPath) else {
                // A stray `.part` of the same name belongs to someone else: leave it, move on.
                _ = FileOps.unlinkIfInode(candidate.path, inode: inode)
                continue
            }
            candidate.inode = inode
            candidate.partInode = partInode
            return candidate
        }
        throw RPCError(.forbidden, "no free name for \(stem) in \(directory)")
    }

    /// Moves the verified `.part` to the final name without replacing anything that appeared
    /// there meanwhile: the placeholder (ours, by inode) is removed, the body hard-linked to the
    /// name (`EEXIST` → the next ` (n)` name), the `.part` unlinked, the folder fsynced.
    /// With `overwrite`, a plain `rename` replaces the old file atomically.
    ///
    /// - Returns: the reservation actually used (its `number` may have grown).
    public func commit(overwrite: Bool) throws(RPCError) -> FileReservation {
        if overwrite, number == 0, inode == nil {
            guard rename(partPath, path) == 0 else { throw FileOps.failure("cannot move the download to \(path)") }
            FileOps.syncDirectory(directory)
            return self
        }
        if let inode { _ = FileOps.unlinkIfInode(path, inode: inode) }
        var candidate = self
        candidate.inode = nil
        while candidate.number <= Self.maxNumber {
            if link(partPath, candidate.path) == 0 {
                unlink(partPath)
                FileOps.syncDirectory(directory)
                return candidate
            }
            let code = errno
            if code == EEXIST {
                candidate.number += 1
                continue
            }
            if code == EPERM || code == EOPNOTSUPP || code == ENOTSUP {
                // A file system without hard links (FAT): rename after checking the name is
                // free. The check-then-rename window is the price of such a file system.
                if FileOps.lstatMode(candidate.path) != nil {
                    candidate.number += 1
                    continue
                }
                guard rename(partPath, candidate.path) == 0 else {
                    throw FileOps.failure("cannot move the download to \(candidate.path)")
                }
                FileOps.syncDirectory(directory)
                return candidate
            }
            errno = code
            throw FileOps.failure("cannot move the download to \(candidate.path)")
        }
        throw RPCError(.forbidden, "no free name for \(stem) in \(directory)")
    }

    /// The final file this reservation's `.part` became, if the move already happened: the name
    /// (any ` (n)` up to 20 past the reserved one, `.jpg` or `.png` for a corrected extension)
    /// whose inode is the `.part`'s.
    public func committedFile() -> FileReservation? {
        guard let partInode else { return nil }
        for ext in [ext, "jpg", "png"] {
            for number in 0...(number + 20) {
                var candidate = self
                candidate.ext = ext
                candidate.number = number
                var info = stat()
                if lstat(candidate.path, &info) == 0, UInt64(info.st_ino) == partInode,
                   (info.st_mode & S_IFMT) == S_IFREG {
                    candidate.inode = nil
                    return candidate
                }
            }
        }
        return nil
    }

    /// Removes the `.part` and the placeholder (if still ours): what `download.cancel` and a
    /// failure leave behind is nothing.
    public func discard() {
        unlink(partPath)
        if let inode { _ = FileOps.unlinkIfInode(path, inode: inode) }
        FileOps.syncDirectory(directory)
    }
}

/// The POSIX calls downloads are made of, with errors turned into contract errors.
enum FileOps {
    /// The `S_IFMT` bits of what is at `path` (not following a symlink), nil when nothing is.
    static func lstatMode(_ path: String) -> mode_t? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return info.st_mode & S_IFMT
    }

    /// Creates an empty file only if nothing is at `path`; returns its inode, nil when the
    /// name is taken.
    static func createPlaceholder(_ path: String) throws(RPCError) -> UInt64? {
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if fd < 0 {
            if errno == EEXIST { return nil }
            throw failure("cannot create \(path)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("cannot read \(path)") }
        return UInt64(info.st_ino)
    }

    /// Creates an empty file only if nothing is at `path`: false when the name is taken.
    static func createExclusive(_ path: String) throws(RPCError) -> Bool {
        try createPlaceholder(path) != nil
    }

    /// Removes `path` only if it is still the file with `inode` (our placeholder).
    static func unlinkIfInode(_ path: String, inode: UInt64) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, UInt64(info.st_ino) == inode, info.st_size == 0 else { return false }
        return unlink(path) == 0
    }

    /// The size of a regular file at `path` (not a symlink), nil otherwise.
    static func regularFileSize(_ path: String) -> Int? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// Empties a file (a restart from byte 0).
    static func truncate(_ path: String) throws(RPCError) {
        let fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw failure("cannot empty \(path)") }
        close(fd)
    }

    /// Writes `bytes` as the whole content of the existing file at `path`.
    static func write(_ bytes: [UInt8], to path: String) throws(RPCError) {
        let fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw failure("cannot write \(path)") }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw failure("cannot write \(path)")
            }
            offset += written
        }
    }

    /// Flushes a file's data to the disk (`fsync`), so a crash after the rename cannot leave
    /// a final name over missing bytes.
    static func syncFile(_ path: String) throws(RPCError) {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw failure("cannot open \(path)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure("cannot flush \(path) to disk") }
    }

    /// Flushes a folder's entries (a rename or unlink in it), best effort.
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// Reads a whole regular file.
    /// Errors keep their `errno`'s kind (`StorageFailure`): out of descriptors is `busy`, a
    /// vanished file `storage_unavailable`.
    static func read(_ path: String) throws(RPCError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("cannot read the downloaded body \(path)") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("cannot read the downloaded body \(path)") }
        var bytes = [UInt8](repeating: 0, count: max(0, Int(info.st_size)))
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw failure("cannot read the downloaded body \(path)") }
            if n == 0 { break }  // shorter than it was: what is there is the body
            offset += n
        }
        return Array(bytes.prefix(offset))
    }

    /// The current `errno` as a contract error (`StorageFailure`): `storage_unavailable` for a
    /// full, read-only, unwritable or vanished folder, `busy` when out of descriptors.
    static func failure(_ what: String) -> RPCError {
        StorageFailure.error(what, errno: errno)
    }
}
