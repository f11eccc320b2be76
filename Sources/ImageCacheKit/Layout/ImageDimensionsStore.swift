import Dispatch
import Foundation
import ImageCacheProtocol
import Logging

/// The real dimensions of images, read from their headers by the thumbnail pipeline, by photo
/// id and by image URL.
///
/// `layout` never fetches (docs/protocol.md, "layout"): it places each photo with what is known, and decoded
/// dimensions win over the provider's. Every thumbnail fetch records here the moment the header
/// is parsed (before the body ends), so a client that re-asks `layout` after a
/// `thumbnail.dimensions` notification gets the decoded size. Memory is bounded by a count,
/// least recently recorded out first: a day of scrolling cannot grow it without limit.
///
/// Opened on a cache folder, the sizes also persist (`ImageDimensionsDatabase`), so they survive
/// a restart. `record` runs on the transfer engine's thread and must never wait for a disk:
/// it only queues the size, and a serial writer stores the queue in one transaction a short
/// moment later (`flushDelay`), so a burst of headers costs one commit. A clean stop (`close`)
/// writes what is queued; a `kill -9` loses only the sizes of that last moment, which the
/// next fetch of those images records again. A memory miss reads the database (a lookup, not
/// a scan).
///
/// It also remembers each image's placeholder (docs/protocol.md, "Placeholders"), computed when
/// its thumbnail was decoded (or the provider's own), beside its size and kept the same way:
/// a later `search`, `photo.get`, `layout` or `thumbnail.dimensions` carries it.
public final class ImageDimensionsStore: Sendable {
    /// Upright pixel dimensions of an original image.
    public struct Size: Sendable, Hashable, Codable {
        /// Width in pixels, after applying EXIF orientation.
        public var width: Int
        /// Height in pixels, after applying EXIF orientation.
        public var height: Int
        /// A size; both sides are expected to be at least 1. Public for what measures the
        /// store from outside the engine (the footprint benchmark).
        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }

    /// Sizes recorded but not yet written, and whether a write is scheduled.
    private struct Pending {
        var records: [ImageDimensionsDatabase.Record] = []
        var scheduled = false
        var closed = false
    }

    private let byPhoto: MemoryCache<String, Size>
    private let byURL: MemoryCache<String, Size>
    private let placeholderByPhoto: MemoryCache<String, ImagePlaceholder>
    private let placeholderByURL: MemoryCache<String, ImagePlaceholder>
    private let database: ImageDimensionsDatabase?
    private let pending = LockedState(Pending())
    private let writer = DispatchQueue(label: "imagecached.dimensions")
    private let capacity: Int
    private let logger: Logger

    /// Sizes waiting for the writer at most (about 100 bytes each).
    static let pendingLimit = 65_536

    /// How long a recorded size waits for others before the batch is written.
    static let flushDelay: DispatchTimeInterval = .milliseconds(200)

    /// A store in memory only (tests, and a daemon whose folder cannot hold the database).
    /// - Parameter capacity: sizes kept per index (photo ids, URLs); 100 000 is about 10 MB.
    public init(capacity: Int = 100_000) {
        self.capacity = max(1, capacity)
        byPhoto = MemoryCache(costLimit: Int.max, countLimit: self.capacity)
        byURL = MemoryCache(costLimit: Int.max, countLimit: self.capacity)
        placeholderByPhoto = MemoryCache(costLimit: Int.max, countLimit: self.capacity)
        placeholderByURL = MemoryCache(costLimit: Int.max, countLimit: self.capacity)
        database = nil
        logger = Logger(label: "imagecached.dimensions")
    }

    /// A store that persists in `<directory>/dimensions.sqlite` (the cache folder, which the
    /// daemon holds under its lock), keeping `capacity` sizes per index there too.
    /// - Throws: when the database cannot be created (an unwritable folder); the daemon then
    ///   falls back to a store in memory and says so.
    public init(capacity: Int = 100_000, directory: String, logger: Logger = Logger(label: "imagecached.dimensions")) throws {
        self.capacity = max(1, capacity)
        byPhoto = MemoryCache(costLimit: Int.max, countLimit: self.capacity)
        byURL = MemoryCache(costLimit: Int.max, countLimit: self.capacity)
        placeholderByPhoto = MemoryCache(costLimit: Int.max, countLimit: self.capacity)
        placeholderByURL = MemoryCache(costLimit: Int.max, countLimit: self.capacity)
        database = try ImageDimensionsDatabase(path: directory + "/dimensions.sqlite", capacity: 2 * self.capacity)
        self.logger = logger
    }

    /// Whether sizes survive a restart.
    package var isPersistent: Bool { database != nil }

    /// Records the decoded size of the image at `url` (credentials removed by the caller's
    /// cache key), and of the photo it belongs to when known. Never waits for the disk.
    public func record(_ size: Size, photo: String?, url: String?) {
        record(size, placeholder: nil, photo: photo, url: url)
    }

    /// Records the size and, when not nil, the placeholder of the image (a nil placeholder
    /// keeps the one recorded before). Never waits for the disk.
    package func record(_ size: Size, placeholder: ImagePlaceholder?, photo: String?, url: String?) {
        guard size.width > 0, size.height > 0 else { return }
        if let photo { byPhoto.insert(size, forKey: photo, cost: 1) }
        if let url { byURL.insert(size, forKey: url, cost: 1) }
        if let placeholder {
            if let photo { placeholderByPhoto.insert(placeholder, forKey: photo, cost: 1) }
            if let url { placeholderByURL.insert(placeholder, forKey: url, cost: 1) }
        }
        guard database != nil else { return }
        var records: [ImageDimensionsDatabase.Record] = []
        if let photo { records.append(.init(kind: .photo, key: photo, size: size, placeholder: placeholder)) }
        if let url { records.append(.init(kind: .url, key: url, size: size, placeholder: placeholder)) }
        let schedule = pending.withLock { p -> Bool in
            guard !p.closed else { return false }
            // A stuck disk must not grow memory: past the bound the oldest half is dropped (those
            // sizes stay in memory only, as the least recently recorded would go first anyway).
            if p.records.count >= Self.pendingLimit { p.records.removeFirst(p.records.count / 2) }
            p.records.append(contentsOf: records)
            defer { p.scheduled = true }
            return !p.scheduled
        }
        if schedule {
            writer.asyncAfter(deadline: .now() + Self.flushDelay) { [self] in writePending() }
        }
    }

    /// The decoded size of a photo, if one of its images was ever fetched.
    public func decoded(photo: String) -> Size? {
        if let size = byPhoto.value(forKey: photo) { return size }
        return stored(.photo, photo, into: byPhoto)
    }

    /// The decoded size of the image at `url`, if it was ever fetched.
    public func decoded(url: String) -> Size? {
        if let size = byURL.value(forKey: url) { return size }
        return stored(.url, url, into: byURL)
    }

    /// The decoded sizes of several photos (those known), with one database read for all the
    /// memory misses: what `layout` asks for a page of photos.
    public func decoded(photos: [String]) -> [String: Size] {
        batch(photos, memory: byPhoto) { $0.sizes(.photo, $1) }
    }

    /// The placeholder of a photo, if one of its images was decoded (or its provider sent one
    /// and an image of it was fetched). May read the database: not on an event loop.
    package func placeholder(photo: String) -> ImagePlaceholder? {
        placeholders(photos: [photo])[photo]
    }

    /// The placeholder of the image at `url`, if it was decoded. May read the database.
    package func placeholder(url: String) -> ImagePlaceholder? {
        if let placeholder = placeholderByURL.value(forKey: url) { return placeholder }
        guard let placeholder = database?.placeholders(.url, [url])[url] else { return nil }
        placeholderByURL.insert(placeholder, forKey: url, cost: 1)
        return placeholder
    }

    /// The placeholder of a photo or URL as memory has it, never reading the disk: what the
    /// transfer engine's thread may ask when a header arrives.
    package func rememberedPlaceholder(photo: String?, url: String) -> ImagePlaceholder? {
        photo.flatMap { placeholderByPhoto.value(forKey: $0) } ?? placeholderByURL.value(forKey: url)
    }

    /// The placeholders of several photos (those known), with one database read for the
    /// memory misses.
    package func placeholders(photos: [String]) -> [String: ImagePlaceholder] {
        batch(photos, memory: placeholderByPhoto) { $0.placeholders(.photo, $1) }
    }

    /// `keys`' values from `memory`, with one database read (`read`) for all the misses, which
    /// memory then keeps: the one shape of the batch lookups above.
    private func batch<Value>(_ keys: [String], memory: MemoryCache<String, Value>,
                              read: (ImageDimensionsDatabase, [String]) -> [String: Value]) -> [String: Value] {
        var found: [String: Value] = [:]
        var missing: [String] = []
        for key in keys where found[key] == nil {
            if let value = memory.value(forKey: key) { found[key] = value } else { missing.append(key) }
        }
        guard let database, !missing.isEmpty else { return found }
        for (key, value) in read(database, missing) {
            memory.insert(value, forKey: key, cost: 1)
            found[key] = value
        }
        return found
    }

    /// `photos` with the placeholders remembered for them where they have none of their own
    /// (a provider's values win, field by field): what `search` and `photo.get` answer.
    package func withPlaceholders(_ photos: [Photo]) -> [Photo] {
        let lacking = photos.filter { $0.blurHash == nil || $0.color == nil }.map(\.id)
        guard !lacking.isEmpty else { return photos }
        let known = placeholders(photos: lacking)
        guard !known.isEmpty else { return photos }
        return photos.map { photo in
            guard let placeholder = known[photo.id] else { return photo }
            var filled = photo
            filled.blurHash = photo.blurHash ?? placeholder.blurHash
            filled.color = photo.color ?? placeholder.color
            return filled
        }
    }

    private func stored(_ kind: ImageDimensionsDatabase.Kind, _ key: String, into memory: MemoryCache<String, Size>) -> Size? {
        guard let size = database?.size(kind, key) else { return nil }
        memory.insert(size, forKey: key, cost: 1)
        return size
    }

    /// Writes every recorded size now and returns when they are on disk (tests; `close`).
    package func flush() {
        writer.sync { writePending() }
    }

    /// Writes what is pending and stops persisting (daemon shutdown); later records stay in
    /// memory.
    public func close() {
        pending.withLock { $0.closed = true }
        flush()
    }

    /// Runs on `writer` only.
    private func writePending() {
        let batch = pending.withLock { p -> [ImageDimensionsDatabase.Record] in
            defer {
                p.records = []
                p.scheduled = false
            }
            return p.records
        }
        guard let database, !batch.isEmpty else { return }
        do {
            try database.write(batch)
        } catch {
            logger.warning("decoded image sizes not persisted; layout keeps them until a restart",
                           metadata: ["count": "\(batch.count)", "error": "\(error)"])
        }
        writtenRecords.update { $0 += batch.count }
    }

    /// Records the store has tried to write since it opened (written or refused by the
    /// database): what a caller awaits to know a scheduled batch has been through, without
    /// forcing it with `flush()` or polling the database.
    package let writtenRecords = Observed(0)
}
