#if canImport(Glibc)
import Glibc
#endif

extension DiskCache {
    /// The index's own paths: the database and SQLite's WAL and shared-memory companions.
    var indexPaths: [String] { ["", "-wal", "-shm"].map { indexPath + $0 } }

    /// Moves aside whatever stands at one of the index's paths and is not a regular file (a
    /// folder, a FIFO, a socket, a device, a symlink the daemon never makes), so that SQLite
    /// can create its files there; the index is then rebuilt from the content files.
    ///
    /// SQLite fails on such a path with "unable to open database file" and, unlike a damaged
    /// file, it cannot simply be removed: it may be something of the user's. So it is renamed
    /// within the folder to `<name>.in-the-way.<UTC time>` (`rename` moves a symlink itself,
    /// never what it points to) and logged at `notice`; nothing is deleted.
    ///
    /// - Returns: whether anything was moved (the index must then be rebuilt).
    /// - Throws: `CacheOpenError.inTheWay` when the rename fails (a read-only folder,
    ///   permissions): start-up cannot go on, and the message names what to remove.
    func moveAsideWhatIsInTheWay() throws(CacheOpenError) -> Bool {
        var moved = false
        for path in indexPaths {
            guard let kind = Self.nonRegularKind(atPath: path) else { continue }
            let aside = Self.asideName(for: path, now: clock.now())
            do {
                try fileSystem.rename(path, to: aside)
            } catch {
                throw .inTheWay(path: path, kind: kind, aside: aside, error: error)
            }
            logger.notice("moved aside what stood at the cache index's path; the index is rebuilt from the content files",
                          metadata: ["path": "\(path)", "was": "\(kind)", "now": "\(aside)"])
            moved = true
        }
        return moved
    }

    /// What is at `path` when it is not a regular file ("a folder", "a symlink"…), found
    /// without following a symlink; nil when nothing is there or a regular file is.
    static func nonRegularKind(atPath path: String) -> String? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "a folder"
        case S_IFLNK: return "a symlink"
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        case S_IFCHR, S_IFBLK: return "a device"
        default: return "not a regular file"
        }
    }

    /// `<path>.in-the-way.<yyyymmddThhmmssZ>`, with `-2`, `-3`… when that name is taken. The
    /// check and the rename are two steps; the cache folder is the daemon's own (mode 0700,
    /// under its lock), where nothing else makes such names between them.
    static func asideName(for path: String, now: Double) -> String {
        var seconds = time_t(exactly: now.rounded(.down)) ?? 0
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let stamp = "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
        let base = path + ".in-the-way." + stamp
        var candidate = base
        var number = 1
        var status = stat()
        while lstat(candidate, &status) == 0 {
            number += 1
            candidate = base + "-\(number)"
        }
        return candidate
    }
}
