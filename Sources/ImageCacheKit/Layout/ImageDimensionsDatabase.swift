import Foundation
import GRDB

/// The disk half of `ImageDimensionsStore`: `<cache_dir>/dimensions.sqlite`, one row per photo
/// id and per image URL, so `layout` answers with decoded sizes after a restart.
///
/// A small SQLite table (through GRDB), not cache entries: a size is a dozen bytes, and two
/// files per size in the disk cache would cost more inodes than the thumbnails themselves.
/// It is not part of `disk_limit` and `cache.clear` leaves it (the contract's `layout` keeps
/// decoded sizes once known); it is bounded by `capacity` rows instead, the least recently
/// recorded going first. WAL with `synchronous = NORMAL`: a `kill -9` loses at most the batch
/// being written, never the file. Reads run beside writes (a `DatabasePool`).
final class ImageDimensionsDatabase: Sendable {
    /// What a row is keyed by.
    enum Kind: String {
        case photo = "p"
        case url = "u"
    }

    /// One size to store, with the image's placeholder when it was computed (nil keeps the
    /// one stored before).
    struct Record: Sendable {
        var kind: Kind
        var key: String
        var size: ImageDimensionsStore.Size
        var placeholder: ImagePlaceholder? = nil
    }

    let path: String
    private let pool: DatabasePool
    private let capacity: Int

    /// Opens (creating when absent) the table at `path`. A file that is not a usable database
    /// is replaced: it only ever holds what later fetches record again.
    init(path: String, capacity: Int) throws {
        self.path = path
        self.capacity = max(1, capacity)
        do {
            pool = try Self.open(path)
        } catch {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            pool = try Self.open(path)
        }
    }

    private static func open(_ path: String) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.label = "imagecached.dimensions"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS dimensions (
                    key TEXT PRIMARY KEY NOT NULL,
                    width INTEGER NOT NULL,
                    height INTEGER NOT NULL
                )
                """)
            // The placeholders came later than the sizes: a file written before has neither
            // column, and gains them (empty) here, its sizes kept.
            let columns = Set(try db.columns(in: "dimensions").map(\.name))
            for column in ["blurhash", "color"] where !columns.contains(column) {
                try db.execute(sql: "ALTER TABLE dimensions ADD COLUMN \(column) TEXT")
            }
        }
        return pool
    }

    /// Stores a batch in one transaction, then trims the table to `capacity` rows. A replaced
    /// row gets a new rowid (`INSERT OR REPLACE`), so rowid order is recording order.
    func write(_ rows: [Record]) throws {
        guard !rows.isEmpty else { return }
        try pool.write { db in
            // A row without a placeholder keeps the one stored (the values are read before the
            // replaced row goes).
            let statement = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO dimensions (key, width, height, blurhash, color) VALUES (?1, ?2, ?3,
                    coalesce(?4, (SELECT blurhash FROM dimensions WHERE key = ?1)),
                    coalesce(?5, (SELECT color FROM dimensions WHERE key = ?1)))
                """)
            for row in rows {
                try statement.execute(arguments: [Self.key(row.kind, row.key), row.size.width, row.size.height,
                                                  row.placeholder?.blurHash, row.placeholder?.color])
            }
            try db.execute(sql: "DELETE FROM dimensions WHERE rowid <= (SELECT max(rowid) FROM dimensions) - ?",
                           arguments: [capacity])
        }
    }

    /// The stored size, or nil (also when the read fails: a layout then says `provider` or
    /// `unknown`, which is what it would have said before the fetch).
    func size(_ kind: Kind, _ key: String) -> ImageDimensionsStore.Size? {
        sizes(kind, [key])[key]
    }

    /// The stored sizes of several keys in one read.
    func sizes(_ kind: Kind, _ keys: [String]) -> [String: ImageDimensionsStore.Size] {
        guard !keys.isEmpty else { return [:] }
        do {
            return try pool.read { db in
                var found: [String: ImageDimensionsStore.Size] = [:]
                let statement = try db.cachedStatement(sql: "SELECT width, height FROM dimensions WHERE key = ?")
                for key in keys {
                    if let row = try GRDB.Row.fetchOne(statement, arguments: [Self.key(kind, key)]) {
                        found[key] = ImageDimensionsStore.Size(width: row[0], height: row[1])
                    }
                }
                return found
            }
        } catch {
            return [:]
        }
    }

    /// The stored placeholders of several keys (those that have one) in one read; empty when
    /// the read fails.
    func placeholders(_ kind: Kind, _ keys: [String]) -> [String: ImagePlaceholder] {
        guard !keys.isEmpty else { return [:] }
        do {
            return try pool.read { db in
                var found: [String: ImagePlaceholder] = [:]
                let statement = try db.cachedStatement(sql: "SELECT blurhash, color FROM dimensions WHERE key = ?")
                for key in keys {
                    if let row = try GRDB.Row.fetchOne(statement, arguments: [Self.key(kind, key)]),
                       let blurHash: String = row[0], let color: String = row[1],
                       let placeholder = ImagePlaceholder(checking: blurHash, color: color) {
                        found[key] = placeholder
                    }
                }
                return found
            }
        } catch {
            return [:]
        }
    }

    /// Rows stored now (tests).
    func count() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM dimensions") ?? 0 }
    }

    private static func key(_ kind: Kind, _ key: String) -> String { kind.rawValue + "|" + key }
}
