import Foundation

/// Search pages, photo records and `photo.get` details in the fleet's shared tier, so that one
/// host's search answers the same search on every host, and an id one host returned resolves
/// on every other (`photo.get`, thumbnails, downloads), without a provider request.
///
/// Keys are the SHA-256 of what identifies the record (`SearchPageKey.stableKey`, a photo id):
/// query text and provider ids are outside input, and memcached keys may hold neither spaces
/// nor more than 250 bytes. Values are `SharedRecordFrame`s around JSON that names its own key,
/// and are read as outside input: a value that is not a frame of the expected kind, does not
/// decode, names another page or photo, or whose numbers disagree with each other is a miss
/// (never an error), and the next store replaces it. Every call is as bounded as the
/// `SharedStore` below it; none throws.
public struct SharedSearchRecords: Sendable {
    /// The tier.
    public let store: any SharedStore

    /// Records in `store`.
    public init(store: any SharedStore) {
        self.store = store
    }

    // MARK: keys

    /// The tier key of a result page.
    package static func pageKey(_ key: SearchPageKey) -> String { "search:" + SHA256Digest.hex(Array(key.stableKey.utf8)) }

    /// The tier key of a photo record (as a search returned it).
    package static func photoKey(id: String) -> String { "photo:" + SHA256Digest.hex(Array(id.utf8)) }

    /// The tier key of a photo's `photo.get` details.
    package static func detailsKey(id: String) -> String { "details:" + SHA256Digest.hex(Array(id.utf8)) }

    // MARK: pages

    /// The page stored under `key`, however old (freshness is the caller's decision, as with
    /// `SearchPageStore`); nil on a miss, an unavailable tier, or a value that is not a
    /// consistent page of exactly this search.
    public func page(_ key: SearchPageKey) async -> StoredSearchPage? {
        guard case .hit(let value) = await store.lookup(Self.pageKey(key), claim: nil),
              let payload = SharedRecordFrame.decode(value, as: .searchPage),
              let stored = SearchPageRecord.decode(Data(payload), for: key),
              Self.isConsistent(stored.page, for: key) else { return nil }
        return stored
    }

    /// Stores a page for `ttl` (whole seconds; under one second nothing is stored, since
    /// memcached reads 0 as "never expires"). Returns whether the tier took it.
    @discardableResult
    package func storePage(_ page: StoredSearchPage, for key: SearchPageKey, ttl: Duration) async -> Bool {
        guard ttl >= .seconds(1), let json = SearchPageRecord.encode(page, for: key) else { return false }
        return await store.store(Self.pageKey(key), SharedRecordFrame.encode(.searchPage, payload: Array(json)), ttl: ttl)
    }

    // MARK: photos

    /// The record of photo `id` as a search returned it, or nil.
    public func photo(id: String) async -> ProviderPhoto? {
        await read(Self.photoKey(id: id), kind: .photo, id: id)
    }

    /// The `photo.get` details of photo `id`, or nil.
    package func details(id: String) async -> ProviderPhoto? {
        await read(Self.detailsKey(id: id), kind: .photoDetails, id: id)
    }

    /// Stores the records of a page's photos, all at once (the client pipelines them).
    package func storePhotos(_ photos: [ProviderPhoto], ttl: Duration) async {
        guard ttl >= .seconds(1) else { return }
        let store = store
        await withTaskGroup(of: Void.self) { group in
            for photo in photos {
                guard let json = try? JSONEncoder().encode(photo) else { continue }
                let value = SharedRecordFrame.encode(.photo, payload: Array(json))
                group.addTask { await store.store(Self.photoKey(id: photo.id), value, ttl: ttl) }
            }
        }
    }

    /// Stores a `photo.get` answer.
    package func storeDetails(_ photo: ProviderPhoto, ttl: Duration) async {
        guard ttl >= .seconds(1), let json = try? JSONEncoder().encode(photo) else { return }
        await store.store(Self.detailsKey(id: photo.id), SharedRecordFrame.encode(.photoDetails, payload: Array(json)), ttl: ttl)
    }

    // MARK: checks

    private func read(_ key: String, kind: SharedRecordFrame.Kind, id: String) async -> ProviderPhoto? {
        guard case .hit(let value) = await store.lookup(key, claim: nil),
              let payload = SharedRecordFrame.decode(value, as: kind),
              let photo = try? JSONDecoder().decode(ProviderPhoto.self, from: Data(payload)),
              photo.id == id, Self.isConsistent(photo) else { return nil }
        return photo
    }

    /// Whether a decoded page could be the provider's answer to `key`: its paging numbers are
    /// the ones asked for and agree with each other (the decoder bypasses the initializer that
    /// computes them), and each photo is the searched provider's.
    static func isConsistent(_ page: ProviderSearchPage, for key: SearchPageKey) -> Bool {
        page.page == key.query.page && page.perPage == key.query.perPage && page.total >= 0 && page.skipped >= 0
            && page.totalPages == Pagination.totalPages(total: page.total, perPage: page.perPage)
            && page.hasMore == Pagination.hasMore(page: page.page, totalPages: page.totalPages)
            && page.photos.allSatisfy { $0.id.hasPrefix(key.provider.rawValue + ":") && isConsistent($0) }
    }

    /// Whether a decoded photo names a known provider and keeps its dimensions positive.
    static func isConsistent(_ photo: ProviderPhoto) -> Bool {
        guard let colon = photo.id.firstIndex(of: ":"), ProviderID(rawValue: String(photo.id[..<colon])) != nil,
              photo.id.index(after: colon) < photo.id.endIndex else { return false }
        return (photo.photo.width ?? 1) > 0 && (photo.photo.height ?? 1) > 0
    }
}
