import Foundation

/// Which part of the cache an entry belongs to, so that `cache.clear {what}` can empty one
/// part without touching the others, and so that keys of different parts never collide.
public enum CacheNamespace: UInt8, Sendable, Hashable, CaseIterable {
    /// Delivered thumbnail images (the key is the image URL and the delivered width).
    case thumbnail = 0
    /// Search-result pages (JSON), kept for `search_ttl` and readable stale after that.
    case search = 1
    /// Photo metadata the daemon remembers so that later calls may name a photo by id.
    case metadata = 2

    /// The prefix every key of this namespace starts with.
    var prefix: String {
        switch self {
        case .thumbnail: return "thumb"
        case .search: return "search"
        case .metadata: return "photo"
        }
    }
}

/// The identity of one cached thing, free of credentials.
///
/// The contract keys a thumbnail by its image URL (credentials removed) and its delivered
/// width, so two sizes of one image are two entries and an API key never reaches the disk.
/// The SHA-256 of `rawValue` names the content file, so the file name reveals nothing and
/// has a fixed length whatever the URL.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The part of the cache this key lives in.
    public let namespace: CacheNamespace
    /// The full key text, e.g. `thumb|256|https://images.example/a.jpg`. Stored in the index
    /// and the entry's description, so it must never hold a secret: the constructors strip them.
    public let rawValue: String
    /// For thumbnails, the credential-free image URL (used by `evict(url:)`); nil otherwise.
    public let url: String?
    /// `rawValue`'s hash, computed once: the memory tier hashes a key on every lookup, and
    /// hashing a long URL each time would cost more than the rest of the lookup.
    private let precomputedHash: Int

    init(namespace: CacheNamespace, rawValue: String, url: String?) {
        self.namespace = namespace
        self.rawValue = rawValue
        self.url = url
        precomputedHash = rawValue.hashValue
    }

    /// Keys are equal when their text is (the text determines namespace and URL).
    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool {
        lhs.precomputedHash == rhs.precomputedHash && lhs.rawValue == rhs.rawValue
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(precomputedHash)
    }

    /// The key of a thumbnail of `url` delivered `width` pixels wide.
    ///
    /// User info and credential-like query items (`key`, `api_key`, `client_id`, `token`…)
    /// are removed first, so the same image fetched with two API keys shares one entry.
    public static func thumbnail(url: String, width: Int) -> CacheKey {
        let clean = CacheKey.removingCredentials(from: url)
        return CacheKey(namespace: .thumbnail, rawValue: "thumb|\(width)|\(clean)", url: clean)
    }

    /// The key of the note that says which width a request for `url` at `size` was delivered
    /// at, when that is not `size` itself (a provider variant narrower than `2 × size` is
    /// delivered as it is). It lets a later request for the same size find the entry without
    /// knowing the image's width; it lives with the thumbnails, so evicting or clearing them
    /// removes it too.
    package static func thumbnailWidthNote(url: String, size: Int) -> CacheKey {
        let clean = CacheKey.removingCredentials(from: url)
        return CacheKey(namespace: .thumbnail, rawValue: "thumbsize|\(size)|\(clean)", url: clean)
    }

    /// The key of one page of search results. Every parameter that changes the answer is
    /// part of the key; the query is used as given (callers trim it first).
    package static func searchPage(provider: String, query: String?, feed: String? = nil,
                                  page: Int, perPage: Int, safe: Bool) -> CacheKey {
        let what = query.map { "q=" + $0 } ?? "feed=" + (feed ?? "")
        return CacheKey(namespace: .search,
                        rawValue: "search|\(provider)|\(page)|\(perPage)|\(safe ? 1 : 0)|\(what)",
                        url: nil)
    }

    /// The key of a remembered photo's metadata, by its `provider:id`.
    public static func photo(id: String) -> CacheKey {
        CacheKey(namespace: .metadata, rawValue: "photo|\(id)", url: nil)
    }

    /// Rebuilds a key from its stored text (index rows and entries' descriptions), or nil when the text is
    /// not one this type produces.
    init?(storedText: String) {
        let parts = storedText.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        guard let first = parts.first else { return nil }
        switch first {
        case "thumb", "thumbsize":
            guard parts.count == 3 else { return nil }
            self.init(namespace: .thumbnail, rawValue: storedText, url: String(parts[2]))
        case "search":
            self.init(namespace: .search, rawValue: storedText, url: nil)
        case "photo":
            self.init(namespace: .metadata, rawValue: storedText, url: nil)
        default:
            return nil
        }
    }

    /// Whether `url` has user info or a query item whose name is (or may be, when
    /// percent-encoded) a secret's: a scan without allocation for the common clean URL.
    static func mayCarryCredentials(_ url: String) -> Bool {
        let bytes = url.utf8
        if bytes.contains(UInt8(ascii: "@")) { return true }
        guard let question = bytes.firstIndex(of: UInt8(ascii: "?")) else { return false }
        for pair in bytes[bytes.index(after: question)...].split(separator: UInt8(ascii: "&")) {
            let name = pair.prefix { $0 != UInt8(ascii: "=") }
            if name.contains(UInt8(ascii: "%")) { return true }
            if URLRedaction.secretQueryKeys.contains(String(decoding: name, as: UTF8.self).lowercased()) { return true }
        }
        return false
    }

    /// The digest that names this key's files.
    package var digest: CacheDigest { CacheDigest(of: rawValue) }

    public var description: String { rawValue }

    /// `url` without user info and without the query items `URLRedaction` treats as secrets
    /// (one list for redaction and keys). A string that is not
    /// a URL is returned unchanged (it cannot carry URL credentials).
    static func removingCredentials(from url: String) -> String {
        // Keys are made on every lookup: skip the URL parser when no part can be a secret.
        guard mayCarryCredentials(url) else { return url }
        guard var components = URLComponents(string: url) else { return url }
        var changed = false
        if components.user != nil || components.password != nil {
            components.user = nil
            components.password = nil
            changed = true
        }
        if let items = components.queryItems {
            let kept = items.filter { !URLRedaction.secretQueryKeys.contains($0.name.lowercased()) }
            if kept.count != items.count {
                components.queryItems = kept.isEmpty ? nil : kept
                changed = true
            }
        }
        guard changed else { return url }
        return components.string ?? url
    }
}
