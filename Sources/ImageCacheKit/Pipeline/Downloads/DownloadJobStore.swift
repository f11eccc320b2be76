import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImageCacheProtocol
import Logging

/// The persisted job table: `state_dir/jobs.json`, rewritten whole on every change
/// of a job's state (not of its byte count: the `.part` file's size is the truth for that).
///
/// Crash safety by the classic recipe: write `jobs.json.tmp`, fsync it, rename it over the
/// table, fsync the folder. After `kill -9` at any moment the table is the old one or the new
/// one, never a torn mix. The table is small (jobs are dropped a day after they end), so a
/// JSON file costs less than a database and can be read by a person.
package struct DownloadJobStore: Sendable {
    /// The folder holding the table.
    public let folder: String
    private var path: String { folder + "/jobs.json" }

    /// Creates the state folder if needed (0700: the table names the user's files).
    public init(stateDirectory: String) throws {
        folder = stateDirectory
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    /// Where an older daemon kept the table: `cache_dir/downloads/`.
    package static func legacyFolder(cacheDirectory: String) -> String { cacheDirectory + "/downloads" }

    /// Moves a table left in `cache_dir/downloads/` into the state folder, once.
    ///
    /// The folders may be on different file systems, so the move is a durable write of the
    /// new table (`save`) followed by the removal of the old, never a `rename`. A crash in
    /// between leaves both: the new one then wins and the old is removed on the next start.
    /// An old table that cannot be read is not lost: it lands beside the new one as
    /// `jobs.json.bad` (as `load` would have put it), and the start goes on with no jobs.
    package func migrate(fromCacheDirectory cacheDirectory: String, logger: Logger) {
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

    /// The jobs saved last; empty when there is no table. An unreadable table is moved
    /// aside (`jobs.json.bad`) and reported, so one bad file never stops the daemon.
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
        let fd = open(temporary, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
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
