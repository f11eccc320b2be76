import Foundation
import GRDB

/// One row of the index: everything known about an entry except its content.
struct IndexRow {
    var digest: CacheDigest
    var key: CacheKey
    var entry: StoredEntry
    /// Bytes charged against `disk_limit`: content plus description.
    var stored: Int
    var lastAccess: Double
}

/// The crash-safe index of the disk cache: SQLite (through GRDB) in WAL mode.
///
/// WAL with `synchronous = NORMAL` makes each commit durable against a process crash
/// (`kill -9`) without an fsync per entry; a power loss may lose the last commits, which the
/// orphan sweep and the first-read checksum turn into misses. The index is read whole once
/// at open into `DiskCache`'s memory mirror, so lookups never touch SQLite; it is written
/// under `DiskCache`'s writer lock only.
final class CacheIndex: Sendable {
    let path: String
    private let queue: DatabaseQueue

    /// Opens (creating when absent) the index at `path`. Throws when the file is not a
    /// usable SQLite database; the caller then rebuilds it from the files.
    init(path: String) throws {
        self.path = path
        var configuration = Configuration()
        configuration.label = "imagecached.cache-index"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Checkpoints are the only fsyncs in WAL mode with synchronous = NORMAL; one every
            // 8192 pages (32 MiB of WAL) instead of SQLite's 1000 keeps puts off the disk's
            // flush latency, which on a busy disk dominated the cost of a put.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 8192")
        }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS entries (
                    digest BLOB PRIMARY KEY NOT NULL,
                    key TEXT NOT NULL,
                    namespace INTEGER NOT NULL,
                    url TEXT,
                    size INTEGER NOT NULL,
                    stored INTEGER NOT NULL,
                    checksum BLOB NOT NULL,
                    content_type TEXT NOT NULL,
                    width INTEGER,
                    height INTEGER,
                    created REAL NOT NULL,
                    last_access REAL NOT NULL,
                    expires REAL
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS entries_by_url ON entries(url) WHERE url IS NOT NULL;
                """)
        }
    }

    /// A loaded row, without the key text (the mirror does not keep it).
    struct Loaded {
        var digest: CacheDigest
        var namespace: CacheNamespace
        var entry: StoredEntry
        var stored: Int
        var lastAccess: Double
    }

    /// Every row. Reading every row is also the index's integrity check at open: a damaged
    /// database fails here and is rebuilt.
    func loadAll() throws -> [Loaded] {
        try queue.read { db in
            var rows: [Loaded] = []
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT digest, namespace, size, stored, checksum, content_type, width, height,
                       created, last_access, expires FROM entries
                """)
            while let row = try cursor.next() {
                guard let digest = try Self.digest(row, 0), let checksum = try Self.digest(row, 4),
                      let namespace = CacheNamespace(rawValue: UInt8(truncatingIfNeeded: row[1] as Int))
                else { throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "malformed index row") }
                let entry = StoredEntry(size: row[2], checksum: checksum, contentType: row[5], width: row[6],
                                        height: row[7], created: row[8], expires: row[10])
                rows.append(Loaded(digest: digest, namespace: namespace, entry: entry, stored: row[3], lastAccess: row[9]))
            }
            return rows
        }
    }

    /// A 32-byte blob column as a digest, read without copying it into a `Data` first.
    private static func digest(_ row: Row, _ index: Int) throws -> CacheDigest? {
        try row.withUnsafeData(atIndex: index) { data in data.flatMap { d in d.withUnsafeBytes { CacheDigest(raw: $0) } } }
    }

    /// Applies one batch in one transaction: rows to insert or replace, rows to delete and
    /// access times to record. All or nothing.
    func apply(upserts: [IndexRow], deletes: [CacheDigest], accessTimes: [CacheDigest: Double]) throws {
        try queue.write { db in
            if !upserts.isEmpty {
                let insert = try db.cachedStatement(sql: """
                    INSERT OR REPLACE INTO entries (digest, key, namespace, url, size, stored, checksum,
                        content_type, width, height, created, last_access, expires)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                for row in upserts {
                    let entry = row.entry
                    try insert.execute(arguments: [
                        Data(row.digest.bytes), row.key.rawValue, Int(row.key.namespace.rawValue), row.key.url,
                        entry.size, row.stored, Data(entry.checksum.bytes), entry.contentType, entry.width, entry.height,
                        entry.created, row.lastAccess, entry.expires,
                    ])
                }
            }
            if !deletes.isEmpty {
                let delete = try db.cachedStatement(sql: "DELETE FROM entries WHERE digest = ?")
                for digest in deletes { try delete.execute(arguments: [Data(digest.bytes)]) }
            }
            if !accessTimes.isEmpty {
                let touch = try db.cachedStatement(sql: "UPDATE entries SET last_access = ? WHERE digest = ?")
                for (digest, time) in accessTimes { try touch.execute(arguments: [time, Data(digest.bytes)]) }
            }
        }
    }

    /// Digests of the thumbnails of `url` (any width), or of every URL starting with it.
    func digests(url: String, asPrefix: Bool) throws -> [CacheDigest] {
        try queue.read { db in
            let rows: [Data]
            if asPrefix {
                rows = try Data.fetchAll(db, sql: "SELECT digest FROM entries WHERE url IS NOT NULL AND substr(url, 1, ?) = ?",
                                         arguments: [url.unicodeScalars.count, url])
            } else {
                rows = try Data.fetchAll(db, sql: "SELECT digest FROM entries WHERE url = ?", arguments: [url])
            }
            return rows.compactMap { d in d.withUnsafeBytes { CacheDigest(raw: $0) } }
        }
    }

    /// The stored key text of an entry (for tests and diagnostics).
    func key(of digest: CacheDigest) throws -> String? {
        try queue.read { db in
            try String.fetchOne(db, sql: "SELECT key FROM entries WHERE digest = ?", arguments: [Data(digest.bytes)])
        }
    }

    /// Deletes every row of the given namespaces.
    func deleteAll(namespaces: Set<CacheNamespace>) throws {
        let list = namespaces.map { String($0.rawValue) }.joined(separator: ",")
        try queue.write { db in
            try db.execute(sql: "DELETE FROM entries WHERE namespace IN (\(list))")
        }
    }

    /// Closes the database (the WAL is checkpointed by SQLite on the last close).
    func close() {
        try? queue.close()
    }
}
