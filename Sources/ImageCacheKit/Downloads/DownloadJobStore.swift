import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImageCacheProtocol
import Logging

/// The persisted job table of one cache folder: `state_dir/jobs-<16 hex digits>.json`, the
/// digits the start of the SHA-256 of the cache folder's real path, rewritten whole on every
/// change of a job's state (not of its byte count: the `.part` file's size is the truth for that).
///
/// **One owner**: daemons of one user with their own caches share the default `state_dir`,
/// and a shared table would let each fail and list the other's jobs (last writer wins). So
/// each cache folder has its own table, and the table has the cache folder's one-owner rule:
/// an exclusive `flock` on `jobs-<digits>.lock` (`FolderLock`), held while the store lives.
///
/// Crash safety by the classic recipe: write `<table>.tmp`, fsync it, rename it over the
/// table, fsync the folder. After `kill -9` at any moment the table is the old one or the new
/// one, never a torn mix. The table is small (jobs are dropped a day after they end), so a
/// JSON file costs less than a database and can be read by a person.
package struct DownloadJobStore: Sendable {
    /// The folder holding the table (`state_dir`).
    public let folder: String
    /// The table's file name in `folder`, `jobs-<16 hex digits>.json`.
    package let name: String
    /// The table's path.
    package var path: String { folder + "/" + name }
    private let lock: FolderLock

    /// Another process holds the lock of this cache folder's job table.
    package struct InUse: Error, Sendable, CustomStringConvertible {
        /// The table's path.
        package var table: String
        /// The state folder it is in.
        package var stateDirectory: String

        package var description: String {
            "the download job table \(table) is in use by another process (its lock is held); "
                + "only one imagecached may use a cache folder's job table at a time: "
                + "give this daemon its own state_dir (or its own cache_dir)"
        }
    }

    /// Creates the state folder if needed (0700: the table names the user's files) and takes
    /// the lock of `cacheDirectory`'s table in it.
    ///
    /// - Throws: `InUse` when another process holds that lock; the file system's error when
    ///   the folder or the lock file cannot be made.
    package init(stateDirectory: String, cacheDirectory: String) throws {
        folder = stateDirectory
        name = Self.tableName(cacheDirectory: cacheDirectory)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let lockFile = folder + "/" + String(name.dropLast(".json".count)) + ".lock"
        do {
            lock = try FolderLock(lockFile: lockFile, folder: folder)
        } catch {
            if case .folderInUse = error { throw InUse(table: folder + "/" + name, stateDirectory: folder) }
            throw error
        }
    }

    /// `jobs-<the first 16 hex digits of the SHA-256 of the cache folder's real path>.json`:
    /// the same folder named through a symlink or with a doubled or trailing slash has the
    /// same table (a folder not made yet: its path with those slashes and dots removed).
    package static func tableName(cacheDirectory: String) -> String {
        var canonical = URL(fileURLWithPath: cacheDirectory).standardizedFileURL.path
        if let resolved = realpath(cacheDirectory, nil) {
            canonical = String(cString: resolved)
            free(resolved)
        }
        return "jobs-" + CacheDigest(of: canonical).hex.prefix(16) + ".json"
    }

    /// Releases the table's lock (at the daemon's stop; dropping the store does it too).
    package func release() {
        lock.release()
    }

    /// The name of a table that is one for every daemon of a state folder (what a daemon that
    /// kept no table per cache folder wrote): taken over by the first daemon to start.
    package static let sharedName = "jobs.json"

    /// Where an older daemon kept the table: `cache_dir/downloads/`.
    package static func legacyFolder(cacheDirectory: String) -> String { cacheDirectory + "/downloads" }

    /// Moves a table left in `cache_dir/downloads/` into the state folder, once.
    ///
    /// The folders may be on different file systems, so the move is a durable write of the
    /// new table (`save`) followed by the removal of the old, never a `rename`. A crash in
    /// between leaves both: the new one then wins and the old is removed on the next start.
    /// An old table that cannot be read is not lost: it lands beside the new one as
    /// `<table>.bad` (as `load` would have put it), and the start goes on with no jobs.
    package func migrate(fromCacheDirectory cacheDirectory: String, logger: Logger) {
        adoptSharedTable(logger: logger)
        let legacy = Self.legacyFolder(cacheDirectory: cacheDirectory)
        let oldPath = legacy + "/jobs.json"
        guard legacy != folder, let data = FileManager.default.contents(atPath: oldPath) else { return }
        if FileManager.default.fileExists(atPath: path) {
            logger.notice("removing the download job table's old copy; the one in the state folder is newer",
                          metadata: ["old": "\(oldPath)", "table": "\(path)"])
        } else {
            do {
                let records = try JSONDecoder().decode([DownloadRecord].self, from: data)
                try save(records)
                logger.notice("moved the download job table to the state folder",
                              metadata: ["from": "\(oldPath)", "to": "\(path)", "jobs": "\(records.count)"])
            } catch let error as DownloadError {
                logger.error("cannot move the download job table to the state folder; it stays where it is",
                             metadata: ["from": "\(oldPath)", "to": "\(path)", "reason": "\(error)"])
                return
            } catch {
                let aside = path + ".bad"
                if FileManager.default.createFile(atPath: aside, contents: data, attributes: [.posixPermissions: 0o600]) {
                    logger.error("the old download job table is unreadable; moved aside",
                                 metadata: ["file": "\(oldPath)", "to": "\(aside)", "reason": "\(error)"])
                } else {
                    return
                }
            }
        }
        unlink(oldPath)
        unlink(oldPath + ".tmp")
        FileOps.syncDirectory(legacy)
        rmdir(legacy)  // only when empty: nothing else ever lived there
    }

    /// Takes the state folder's shared `jobs.json` as this cache folder's table when it has
    /// none yet, so that the jobs it holds are resumed and listed by a daemon rather than
    /// orphaned. A `rename` in one folder, so two daemons starting at once cannot both take it.
    private func adoptSharedTable(logger: Logger) {
        let shared = folder + "/" + Self.sharedName
        var status = stat()
        guard lstat(path, &status) != 0, errno == ENOENT, lstat(shared, &status) == 0,
              status.st_mode & S_IFMT == S_IFREG, rename(shared, path) == 0 else { return }
        // Its `.tmp` is left alone: a daemon that still writes the shared table (an older one,
        // during an upgrade) may be between writing it and renaming it.
        FileOps.syncDirectory(folder)
        logger.notice("the state folder's shared download job table is now this cache folder's own",
                      metadata: ["from": "\(shared)", "to": "\(path)"])
    }

    /// The jobs saved last; empty when there is no table. An unreadable table is moved
    /// aside (`<table>.bad`) and reported, so one bad file never stops the daemon.
    public func load(logger: Logger) -> [DownloadRecord] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        do {
            return try JSONDecoder().decode([DownloadRecord].self, from: data)
        } catch {
            logger.error("the download job table is unreadable; moved aside",
                         metadata: ["file": "\(path)", "reason": "\(error)"])
            rename(path, path + ".bad")
            return []
        }
    }

    /// Replaces the table with `records`, durably.
    public func save(_ records: [DownloadRecord]) throws(DownloadError) {
        let data: Data
        do {
            data = try JSONEncoder().encode(records)
        } catch {
            throw .internalFault("cannot encode the download job table: \(error)")
        }
        let temporary = path + ".tmp"
        // Never through a symlink planted at the temporary name, as for the table's lock.
        let fd = open(temporary, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw FileOps.failure("cannot write \(temporary)") }
        var offset = 0
        let ok = data.withUnsafeBytes { raw -> Bool in
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return fsync(fd) == 0
        }
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            let failure = FileOps.failure("cannot save \(path)")
            unlink(temporary)
            throw failure
        }
        FileOps.syncDirectory(folder)
    }
}
