import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImageCacheProtocol
import Logging

/// The persisted job table: `cache_dir/downloads/jobs.json`, rewritten whole on every change
/// of a job's state (not of its byte count: the `.part` file's size is the truth for that).
///
/// Crash safety by the classic recipe: write `jobs.json.tmp`, fsync it, rename it over the
/// table, fsync the folder. After `kill -9` at any moment the table is the old one or the new
/// one, never a torn mix. The table is small (jobs are dropped a day after they end), so a
/// JSON file costs less than a database and can be read by a person.
public struct DownloadJobStore: Sendable {
    /// The folder holding the table.
    public let folder: String
    private var path: String { folder + "/jobs.json" }

    /// Creates the folder if needed.
    public init(cacheDirectory: String) throws {
        folder = cacheDirectory + "/downloads"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
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
    public func save(_ records: [DownloadRecord]) throws(RPCError) {
        let data: Data
        do {
            data = try JSONEncoder().encode(records)
        } catch {
            throw RPCError(.internal, "cannot encode the download job table: \(error)")
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
