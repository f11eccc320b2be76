import CLinux
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImageCacheProtocol

/// The final name of a download, held from the moment the job starts by an empty file
/// created exclusively (`O_CREAT|O_EXCL`), beside the `<name>.part` that receives the body.
///
/// Why a placeholder: two jobs (or a user and a job) asking for `photo.jpg` at once must end
/// with `photo.jpg` and `photo (1).jpg`, never one file replacing the other. Why
/// `renameat2(RENAME_NOREPLACE)` to finish: it fails with `EEXIST` when anything appeared at
/// the name meanwhile, so the finished body never replaces a file the daemon did not create
/// (hard link + unlink where the file system lacks the flag). Every call is relative to the
/// folder's descriptor (`DirectoryHandle`) with a single-component name, never a path.
package struct FileReservation: Sendable, Codable, Hashable {
    /// The resolved folder.
    public var directory: String
    /// The name before any ` (n)` and extension.
    package var stem: String
    /// The extension without its dot, nil for none.
    package var ext: String?
    /// 0 for the plain name, n for `stem (n).ext`.
    public var number: Int
    /// The placeholder's identity (so only our own placeholder is ever removed, never a file
    /// made at the name after it was deleted); nil when `overwrite` kept an existing file at
    /// the name.
    package var placeholder: FileIdentity?
    /// The `.part` file's identity: after the move it is the final file's, which is how a job
    /// whose move happened but whose table entry was not saved (a stop or crash in between)
    /// finds its file again instead of downloading it twice (`committedFile`), and how a
    /// cancel removes that file and no other.
    package var part: FileIdentity?

    /// The highest ` (n)` tried before giving up.
    static let maxNumber = 9999

    /// The file name, numbered when needed.
    public var name: String {
        let base = number == 0 ? stem : "\(stem) (\(number))"
        return ext.map { base + "." + $0 } ?? base
    }

    /// The name of the file the body is written to until it is verified.
    package var partName: String { name + ".part" }

    /// The final path.
    public var path: String { directory + "/" + name }
    /// Where the body is written until it is verified.
    package var partPath: String { path + ".part" }

    /// Reserves the first free name among `stem.ext`, `stem (1).ext`, … in `folder` and
    /// creates its empty `.part`. With `overwrite`, the plain name is taken even when a file
    /// holds it (that file is replaced only when the body is complete and verified).
    ///
    /// - Parameter held: names in this folder (final and `.part`) that other live jobs
    ///   reserved: never taken, even with `overwrite`.
    /// - Parameter replacing: for a peer of a shared daemon, what `overwrite` may replace
    ///   (nil: any regular file or symlink, as for the daemon's own uid).
    /// - Throws: `forbidden` when `overwrite` asks for a name a live job holds, or one
    ///   `replacing` refuses; `storage_unavailable` when the folder refuses new files
    ///   (permissions, read-only).
    package static func reserve(in folder: DirectoryHandle, stem: String, ext: String?, overwrite: Bool,
                               held: Set<String> = [], replacing policy: ReplacePolicy? = nil) throws(DownloadError) -> FileReservation {
        var candidate = FileReservation(directory: folder.path, stem: stem, ext: ext, number: 0, placeholder: nil, part: nil)
        if overwrite, held.contains(candidate.name) || held.contains(candidate.partName) {
            throw .reservedByLiveJob(candidate.path)
        }
        while candidate.number <= maxNumber {
            defer { candidate.number += 1 }
            if held.contains(candidate.name) || held.contains(candidate.partName) { continue }
            if overwrite, candidate.number == 0, let existing = FileOps.lstatMode(in: folder, candidate.name) {
                try policy?.check(candidate.name, in: folder)
                // Replace only a regular file or a symlink (the link itself, never its target).
                if existing == S_IFREG || existing == S_IFLNK,
                   let part = try FileOps.createPlaceholder(in: folder, candidate.partName) {
                    candidate.part = part
                    return candidate
                }
                continue
            }
            guard let placeholder = try FileOps.createPlaceholder(in: folder, candidate.name) else { continue }
            guard let part = try FileOps.createPlaceholder(in: folder, candidate.partName) else {
                // A stray `.part` of the same name belongs to someone else: leave it, move on.
                _ = FileOps.unlinkIfPlaceholder(in: folder, candidate.name, placeholder)
                continue
            }
            candidate.placeholder = placeholder
            candidate.part = part
            return candidate
        }
        throw .noFreeName(stem: stem, folder: folder.path)
    }

    /// Moves the verified `.part` to the final name without replacing anything that appeared
    /// there meanwhile: the `.part` must still be a regular file of one link (not a symlink
    /// swapped in), the placeholder (ours, by identity) is removed, the body renamed with
    /// `RENAME_NOREPLACE` (`EEXIST` → the next ` (n)` name), the folder fsynced. With
    /// `overwrite`, a plain `renameat` replaces the old file atomically — never a name in `held`.
    ///
    /// With a `replacing` policy (a peer of a shared daemon), what stands at the name is
    /// judged again just before it is replaced.
    ///
    /// - Returns: the reservation actually used (its `number` may have grown; its `part` as the
    ///   final file is now, see `movedPart`).
    /// - Throws: `forbidden` when the `.part` is no longer the daemon's file, or `replacing`
    ///   refuses what now stands at the name.
    package func commit(in folder: DirectoryHandle, overwrite: Bool, held: Set<String> = [],
                        replacing policy: ReplacePolicy? = nil) throws(DownloadError) -> FileReservation {
        try checkPart(in: folder)
        if overwrite, number == 0, placeholder == nil {
            guard !held.contains(name) else {
                throw .reservedByLiveJob(path)
            }
            try policy?.check(name, in: folder)
            guard renameat(folder.fd, partName, folder.fd, name) == 0 else {
                throw FileOps.failure("cannot move the download to \(path)")
            }
            folder.sync()
            return movedPart(in: folder)
        }
        if let placeholder { _ = FileOps.unlinkIfPlaceholder(in: folder, name, placeholder) }
        var candidate = self
        candidate.placeholder = nil
        while candidate.number <= Self.maxNumber {
            if !held.contains(candidate.name) {
                switch placeIfFree(candidate.name, in: folder) {
                case .placed:
                    folder.sync()
                    return candidate.movedPart(in: folder)
                case .taken:
                    break
                case .failed(let code):
                    errno = code
                    throw FileOps.failure("cannot move the download to \(candidate.path)")
                }
            }
            candidate.number += 1
        }
        throw .noFreeName(stem: stem, folder: directory)
    }

    /// This reservation with `part` read again from the final name it was just moved to, when
    /// that is still the body (same device and inode, and birth time where there is one): the
    /// move changed its change time, which is what stands in for a birth time on a file system
    /// without one, and the finished job's record must name the file as it now is.
    private func movedPart(in folder: DirectoryHandle) -> FileReservation {
        var moved = self
        if let part, let now = FileIdentity.look(at: name, in: folder.fd), now.isRegular,
           now.identity.device == part.device, now.identity.inode == part.inode,
           part.born == nil || now.identity.born == part.born {
            moved.part = now.identity
        }
        return moved
    }

    /// How moving the `.part` to a name that must be free went.
    private enum Placement {
        case placed
        /// Something stands at the name: the next number is tried.
        case taken
        /// The move failed for another reason (the `errno`).
        case failed(Int32)
    }

    /// Moves the `.part` to `name` only if nothing stands there, with the strongest means the
    /// file system has: `RENAME_NOREPLACE`; else a hard link, which fails with EEXIST too; else
    /// (FAT has neither) a rename after checking that the name is free, whose
    /// check-then-rename window is the price of such a file system.
    private func placeIfFree(_ name: String, in folder: DirectoryHandle) -> Placement {
        if ic_rename_noreplace(folder.fd, partName, folder.fd, name) == 0 { return .placed }
        let code = errno
        guard code == EINVAL || code == ENOSYS else { return code == EEXIST ? .taken : .failed(code) }
        if linkat(folder.fd, partName, folder.fd, name, 0) == 0 {
            unlinkat(folder.fd, partName, 0)
            return .placed
        }
        let linkCode = errno
        guard linkCode == EPERM || linkCode == EOPNOTSUPP || linkCode == ENOTSUP else {
            return linkCode == EEXIST ? .taken : .failed(linkCode)
        }
        if FileOps.lstatMode(in: folder, name) != nil { return .taken }
        return renameat(folder.fd, partName, folder.fd, name) == 0 ? .placed : .failed(errno)
    }

    /// Refuses a `.part` that is no longer a plain file of the daemon's: a symlink (to a file
    /// outside the roots, say) or a hard link swapped in while the job ran is never moved to the
    /// final name.
    package func checkPart(in folder: DirectoryHandle) throws(DownloadError) {
        var info = stat()
        guard fstatat(folder.fd, partName, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            throw FileOps.failure("cannot find the partial download \(partPath)")
        }
        if (info.st_mode & S_IFMT) == S_IFLNK {
            throw .partIsSymbolicLink(partPath)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink == 1 else {
            throw .partReplaced(partPath)
        }
    }

    /// The final file this reservation's `.part` became, if the move already happened: the name
    /// (any ` (n)` up to 20 past the reserved one, any format's extension for a corrected one)
    /// that is the `.part`'s file by identity (`FileIdentity.confirms`). A record whose `.part`
    /// identity cannot confirm anything (one written before identities had a birth time)
    /// finds nothing: its job downloads again rather than adopt a file that may not be its own.
    /// Nor, on a file system without birth times, does one taken before the body was written:
    /// every write moved the `.part`'s change time (`FileIdentity`).
    package func committedFile(in folder: DirectoryHandle) -> FileReservation? {
        guard let part else { return nil }
        let corrected: [String?] = ImageFormat.allCases.map(\.fileExtension).filter { $0 != ext }
        for ext in [ext] + corrected {
            for number in 0...(number + 20) {
                var candidate = self
                candidate.ext = ext
                candidate.number = number
                if let found = FileIdentity.look(at: candidate.name, in: folder.fd), found.isRegular,
                   part.confirms(found.identity) {
                    candidate.placeholder = nil
                    candidate.part = found.identity
                    return candidate
                }
            }
        }
        return nil
    }

    /// Removes the `.part` and the placeholder (if still ours, by identity) from the folder
    /// held open: what `download.cancel` and a failure leave behind is nothing. A symlink
    /// standing at the `.part`'s name is removed itself, never its target. The `.part` goes by
    /// its name: a live job holds that name (no other job takes it), and its identity would
    /// not do on a file system without birth times, where every write the job made moved the
    /// change time. An old record's placeholder (no birth time recorded) is left in place.
    package func discard(in folder: DirectoryHandle) {
        unlinkat(folder.fd, partName, 0)
        if let placeholder { _ = FileOps.unlinkIfPlaceholder(in: folder, name, placeholder) }
        folder.sync()
    }

    /// `discard`, and the file this reservation's `.part` already became (`committedFile`):
    /// a job cancelled while it was not yet reported finished leaves nothing, even when its
    /// move had happened (a cancel as the move ends, or a job found moved after a restart).
    /// Only the `.part`'s own file is removed (`FileIdentity.confirms`), never another at the
    /// same name, even one that was given the same inode number after the job's file was deleted.
    package func discardWithCommitted(in folder: DirectoryHandle) {
        if let committed = committedFile(in: folder), let identity = committed.part {
            _ = FileOps.unlinkIfSameFile(in: folder, committed.name, identity)
        }
        discard(in: folder)
    }
}

/// The POSIX calls downloads are made of, with errors turned into `DownloadError`s. The
/// `in:` forms work on one name in a folder held open (`DirectoryHandle`); the path forms
/// never follow a symlink at the last component.
enum FileOps {
    /// The `S_IFMT` bits of what is at `name` in `folder` (not following a symlink), nil when nothing is.
    static func lstatMode(in folder: DirectoryHandle, _ name: String) -> mode_t? {
        var info = stat()
        guard fstatat(folder.fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return info.st_mode & S_IFMT
    }

    /// Creates an empty file only if nothing is at `name` in `folder`; returns its identity,
    /// nil when the name is taken.
    static func createPlaceholder(in folder: DirectoryHandle, _ name: String) throws(DownloadError) -> FileIdentity? {
        let fd = openat(folder.fd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if fd < 0 {
            if errno == EEXIST { return nil }
            throw failure("cannot create \(folder.path)/\(name)")
        }
        defer { close(fd) }
        guard let created = FileIdentity.look(fd: fd) else { throw failure("cannot read \(folder.path)/\(name)") }
        return created.identity
    }

    /// Removes `name` in `folder` only if it is still our placeholder: the empty regular file
    /// `identity` confirms.
    static func unlinkIfPlaceholder(in folder: DirectoryHandle, _ name: String, _ identity: FileIdentity) -> Bool {
        guard let found = FileIdentity.look(at: name, in: folder.fd), found.isRegular, found.size == 0,
              identity.confirms(found.identity) else { return false }
        return unlinkat(folder.fd, name, 0) == 0
    }

    /// Removes `name` in `folder` only if it is still the regular file `identity` confirms.
    static func unlinkIfSameFile(in folder: DirectoryHandle, _ name: String, _ identity: FileIdentity) -> Bool {
        guard let found = FileIdentity.look(at: name, in: folder.fd), found.isRegular,
              identity.confirms(found.identity) else { return false }
        return unlinkat(folder.fd, name, 0) == 0
    }

    /// Empties the regular file `name` in `folder` (a restart from byte 0), never through a symlink.
    static func truncate(in folder: DirectoryHandle, _ name: String) throws(DownloadError) {
        let fd = openat(folder.fd, name, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw failure("cannot empty \(folder.path)/\(name)") }
        close(fd)
    }

    /// Writes `bytes` as the whole content of the existing file `name` in `folder`, never
    /// through a symlink and only into a regular file of one link.
    static func write(_ bytes: [UInt8], in folder: DirectoryHandle, _ name: String) throws(DownloadError) {
        let fd = folder.openForAppend(name)
        guard fd >= 0 else {
            errno = -fd
            throw failure("cannot write \(folder.path)/\(name)")
        }
        defer { close(fd) }
        guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else { throw failure("cannot write \(folder.path)/\(name)") }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw failure("cannot write \(folder.path)/\(name)")
            }
            offset += written
        }
    }

    /// The size of a regular file at `name` in `folder` (not a symlink), nil otherwise.
    static func regularFileSize(in folder: DirectoryHandle, _ name: String) -> Int? {
        var info = stat()
        guard fstatat(folder.fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// Flushes a file's data to the disk (`fsync`), so a crash after the rename cannot leave
    /// a final name over missing bytes.
    static func syncFile(_ path: String) throws(DownloadError) {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw failure("cannot open \(path)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure("cannot flush \(path) to disk") }
    }

    /// `syncFile` for the file `name` in `folder`, opened beneath it without following a symlink.
    static func syncFile(in folder: DirectoryHandle, _ name: String) throws(DownloadError) {
        let fd = folder.openForReading(name)
        guard fd >= 0 else {
            errno = -fd
            throw failure("cannot open \(folder.path)/\(name)")
        }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure("cannot flush \(folder.path)/\(name) to disk") }
    }

    /// Flushes a folder's entries (a rename or unlink in it), best effort.
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// Reads a whole regular file (`WholeFile`), as a download's storage error.
    static func read(_ path: String) throws(DownloadError) -> [UInt8] {
        do { return try WholeFile.read(path, what: "the downloaded body") } catch { throw .storage(error) }
    }

    /// The current `errno` as a download's storage error (`StorageFailure`'s kinds): `storage_unavailable` for a
    /// full, read-only, unwritable or vanished folder, `busy` when out of descriptors.
    static func failure(_ what: String) -> DownloadError {
        .storage(what, errno: errno)
    }
}
