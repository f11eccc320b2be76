import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a peer of a shared daemon may save: only where that uid could write itself
/// (docs/protocol.md, "Shared daemons").
///
/// The daemon runs as its own user (or root), so its own rights say nothing about the peer's:
/// without these checks any member of `socket_group` could save into another user's folder.
/// They apply to a peer that is neither root nor the daemon's uid, before a name is reserved;
/// the folder is judged by the descriptor the job will write through (`DirectoryHandle`), so
/// what is checked is what is written to.
package enum PeerDestinationCheck {
    /// Refuses a requested folder that leads through a symbolic link (`existing` as given,
    /// `resolved` its `realpath`), or one that does not exist yet (`missing` components): the
    /// daemon would make it as itself, a folder the peer does not own.
    static func checkRequested(_ requested: String, existing: String, resolved: String,
                               missing: [String]) throws(DownloadError) {
        let lexical = URL(fileURLWithPath: existing).standardized.path
        guard lexical == resolved else {
            throw .folderThroughSymbolicLink(requested, resolved: resolved)
        }
        guard missing.isEmpty else {
            throw .folderMissingForPeer(requested)
        }
    }

    /// Refuses `folder` unless `identity` can reach it (search permission on every folder above
    /// it), owns it, and may write and search in it, as `access(2)` would judge for that uid.
    static func checkFolder(_ folder: DirectoryHandle, for identity: PeerIdentity) throws(DownloadError) {
        // Every folder above it, from "/" to its parent, each checked before going into it.
        var prefix = "/"
        for component in folder.path.split(separator: "/") {
            var above = stat()
            guard lstat(prefix, &above) == 0, identity.may(X_OK, above) else {
                throw .folderNotReachable(folder.path, blocker: prefix, uid: identity.uid)
            }
            prefix = prefix == "/" ? "/" + component : prefix + "/" + component
        }
        var info = stat()
        guard fstat(folder.fd, &info) == 0 else {
            throw .storage("cannot read the download folder \(folder.path)", errno: errno)
        }
        guard info.st_uid == identity.uid else {
            throw .folderNotYours(folder.path, owner: info.st_uid, uid: identity.uid)
        }
        guard identity.may(W_OK | X_OK, info) else {
            throw .folderNotWritable(folder.path, uid: identity.uid, mode: UInt32(info.st_mode))
        }
    }
}

/// What `overwrite` may replace for a peer of a shared daemon: a regular file the peer owns
/// (`st_uid`), or one the daemon saved for that peer, known by the finished jobs of the job
/// table (path and `FileIdentity`, so a file made at that path since, even at a reused inode
/// number, is not mistaken for it), since the daemon's files are owned by the daemon's uid.
/// Never a symbolic link.
package struct ReplacePolicy: Sendable, Hashable {
    /// A file by where it is and which file it is.
    package struct SavedFile: Sendable, Hashable {
        /// Its path.
        package var path: String
        /// The file the job saved there (an old record's confirms nothing: never replaced).
        package var identity: FileIdentity
    }

    /// The peer's uid.
    package var uid: UInt32
    /// Files the daemon saved for that peer (its finished jobs still in the table).
    package var saved: Set<SavedFile>

    /// Refuses replacing `name` in `folder` when what stands there now is not the peer's;
    /// nothing there is fine (nothing is replaced).
    func check(_ name: String, in folder: DirectoryHandle) throws(DownloadError) {
        var info = stat()
        guard fstatat(folder.fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
        let path = folder.path + "/" + name
        if (info.st_mode & S_IFMT) == S_IFLNK { throw .overwriteSymbolicLink(path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return }  // not replaced: the next name is taken
        if info.st_uid == uid { return }
        if let now = FileIdentity.look(at: name, in: folder.fd),
           saved.contains(where: { $0.path == path && $0.identity.confirms(now.identity) }) { return }
        throw .overwriteNotYours(path, owner: info.st_uid, uid: uid)
    }
}
