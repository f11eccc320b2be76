import DequeModule

/// Where remembered photos persist so that ids resolve after a restart; the cache's index
/// backs it (Caching/).
public protocol PhotoPersisting: Sendable {
    func save(_ photos: [ProviderPhoto]) async
    func load(id: String) async -> ProviderPhoto?
}

/// Every photo the daemon returned, by id (docs/protocol.md, "Objects": later calls may name a photo by id
/// alone), with the variants the thumbnail pipeline chooses from.
///
/// Memory holds the most recent `capacity` photos; with a persistence, every photo is also
/// written there and a miss in memory is looked up there. The memory part sits behind a lock
/// rather than in the actor, so a `thumbnail.show` answered from the memory cache can resolve
/// its photo inline on the connection's event loop (`remembered(id:)`), without a hop.
public actor PhotoRegistry {
    private struct Memory {
        var photos: [String: ProviderPhoto] = [:]
        var order = Deque<String>()
    }

    private nonisolated let memory = LockedState(Memory())
    private let capacity: Int
    private let persistence: (any PhotoPersisting)?
    /// The latest save: each save waits for the one before, so records reach the disk in the
    /// order they were merged (two searches returning one photo must not store the older).
    private var lastSave: Task<Void, Never>?

    public init(capacity: Int = 20_000, persistence: (any PhotoPersisting)? = nil) {
        self.capacity = max(1, capacity)
        self.persistence = persistence
    }

    /// Remembers photos; a newer record of an id merges into the older one (see `merged`).
    public func remember(_ new: [ProviderPhoto]) async {
        let capacity = self.capacity
        let changed = memory.withLock { m -> [ProviderPhoto] in
            var changed: [ProviderPhoto] = []
            for photo in new {
                let merged = m.photos[photo.id].map { Self.merged($0, with: photo) } ?? photo
                if m.photos[photo.id] != merged { changed.append(merged) }
                if m.photos.updateValue(merged, forKey: photo.id) == nil { m.order.append(photo.id) }
            }
            while m.order.count > capacity, let oldest = m.order.popFirst() { m.photos[oldest] = nil }
            return changed
        }
        guard let persistence, !changed.isEmpty else { return }
        let previous = lastSave
        let save = Task {
            await previous?.value
            await persistence.save(changed)
        }
        lastSave = save
        await save.value
    }

    /// The photo with this id, from memory or the persistence; nil when never returned.
    public func photo(id: String) async -> ProviderPhoto? {
        if let photo = remembered(id: id) { return photo }
        guard let stored = await persistence?.load(id: id) else { return nil }
        let capacity = self.capacity
        return memory.withLock { m in
            // A search may have remembered a newer record while the stored one was read.
            if let newer = m.photos[id] { return newer }
            m.photos[id] = stored
            m.order.append(id)
            while m.order.count > capacity, let oldest = m.order.popFirst() { m.photos[oldest] = nil }
            return stored
        }
    }

    /// The photo with this id if it is in memory now; never waits (nil also when it is only
    /// in the persistence: call `photo(id:)` for that).
    public nonisolated func remembered(id: String) -> ProviderPhoto? {
        memory.withLock { $0.photos[id] }
    }

    /// A newer record over an older one: newer non-nil fields win, but sized image variants
    /// and known dimensions are kept when the newer record lacks them (Flickr's `getInfo` has
    /// no sizes, its search answer had).
    package static func merged(_ old: ProviderPhoto, with new: ProviderPhoto) -> ProviderPhoto {
        var result = new
        let oldSized = old.variants.filter { $0.width != nil }.count
        let newSized = new.variants.filter { $0.width != nil }.count
        if oldSized > newSized {
            result.variants = old.variants
            result.photo.thumbURL = old.photo.thumbURL
            result.photo.fullURL = old.photo.fullURL
        }
        result.photo.width = new.photo.width ?? old.photo.width
        result.photo.height = new.photo.height ?? old.photo.height
        result.photo.likes = new.photo.likes ?? old.photo.likes
        result.photo.description = new.photo.description ?? old.photo.description
        result.photo.pageURL = new.photo.pageURL ?? old.photo.pageURL
        result.photo.takenAt = new.photo.takenAt ?? old.photo.takenAt
        result.photo.uploadedAt = new.photo.uploadedAt ?? old.photo.uploadedAt
        result.photo.blurHash = new.photo.blurHash ?? old.photo.blurHash
        result.photo.color = new.photo.color ?? old.photo.color
        // Once any answer said video, it stays one: its still frame never becomes a full image.
        result.photo.media = new.photo.media ?? old.photo.media
        if result.photo.isVideo { result.photo.fullURL = nil }
        result.photo.tags = new.photo.tags ?? old.photo.tags
        result.photo.views = new.photo.views ?? old.photo.views
        result.photo.downloads = new.photo.downloads ?? old.photo.downloads
        result.photo.exif = new.photo.exif ?? old.photo.exif
        result.photo.location = new.photo.location ?? old.photo.location
        result.resizableURL = new.resizableURL ?? old.resizableURL
        result.downloadLocation = new.downloadLocation ?? old.downloadLocation
        return result
    }
}
