import Foundation

/// One row of the chaos soak's CSV: the daemon seen from outside (/proc, its files, the
/// memcached nodes' `stats`) and the clients' figures since the previous row.
struct ChaosSample {
    var seconds: Double
    var phase: String
    var rssKiB: Int
    /// The `memory_limit` the daemon was last told (SIGHUP switches it).
    var memoryLimitMiB: Int
    var fds: Int
    var threads: Int
    var diskBytes: Int
    var diskEntries: Int
    var walBytes: Int
    var jobTableBytes: Int
    var memcachedConnections: [Int]
    var requests: Int
    var ok: Int
    var refused: Int
    var unexplained: Int
    var hung: Int
    var hitP50: Double?
    var hitP99: Double?

    static let header = "seconds,phase,rss_kib,memory_limit_mib,fds,threads,disk_bytes,disk_entries,wal_bytes,job_table_bytes,"
        + "mc0_connections,mc1_connections,mc2_connections,requests,ok,refused,unexplained,hung,memory_hit_p50_us,memory_hit_p99_us"

    var csv: String {
        let connections = (0..<3).map { $0 < memcachedConnections.count ? String(memcachedConnections[$0]) : "" }
        let fields: [String] = [String(format: "%.1f", seconds), phase, String(rssKiB), String(memoryLimitMiB), String(fds), String(threads),
                                String(diskBytes), String(diskEntries), String(walBytes), String(jobTableBytes)]
            + connections + [String(requests), String(ok), String(refused), String(unexplained), String(hung),
                             hitP50.map { String(format: "%.0f", $0) } ?? "", hitP99.map { String(format: "%.0f", $0) } ?? ""]
        return fields.joined(separator: ",")
    }

    /// `VmRSS` (KiB) and `Threads` of a process, nil once it is gone.
    static func status(pid: Int32) -> (rss: Int, threads: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        var rss: Int?, threads: Int?
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if parts.first == "VmRSS:" { rss = parts.dropFirst().first.flatMap { Int($0) } }
            if parts.first == "Threads:" { threads = parts.dropFirst().first.flatMap { Int($0) } }
        }
        guard let rss, let threads else { return nil }
        return (rss, threads)
    }

    /// Open file descriptors of a process (entries of /proc/PID/fd).
    static func openFiles(pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    /// Bytes and count of the regular files under `folder` (the cache's data), and the size of
    /// every SQLite write-ahead log (`*-wal`) under `cacheDir`.
    static func cacheFiles(_ cacheDir: String) -> (bytes: Int, entries: Int, wal: Int) {
        var bytes = 0, entries = 0, wal = 0
        guard let walker = FileManager.default.enumerator(atPath: cacheDir) else { return (0, 0, 0) }
        while let name = walker.nextObject() as? String {
            guard let attributes = walker.fileAttributes, attributes[.type] as? FileAttributeType == .typeRegular else { continue }
            let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
            if name.hasSuffix("-wal") { wal += size }
            if name.hasPrefix("data/") {
                bytes += size
                entries += 1
            }
        }
        return (bytes, entries, wal)
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
