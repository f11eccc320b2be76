import Foundation

/// What a caller says about an entry when storing it, and gets back when reading it.
public struct CacheEntryInfo: Sendable, Equatable {
    /// MIME type of the bytes (`image/jpeg`, `application/json`…).
    public var contentType: String
    /// Pixel width of an image, when known (read by decoding it).
    public var width: Int?
    /// Pixel height of an image, when known.
    public var height: Int?
    /// When the entry stops being fresh; nil for never (thumbnails). An expired entry is kept
    /// until evicted and can still be read with `allowStale` (the offline fallback).
    package var expires: Date?

    public init(contentType: String, width: Int? = nil, height: Int? = nil, expires: Date? = nil) {
        self.contentType = contentType
        self.width = width
        self.height = height
        self.expires = expires
    }
}

/// Which tier answered a lookup (`source` of `thumbnail.show` for the cached cases).
public enum CacheSource: String, Sendable {
    /// The memory tier: no I/O was needed.
    case memory
    /// The disk tier: the entry survived from an earlier run or was evicted from memory.
    case disk
}

/// A cache lookup that succeeded.
public struct CacheHit: Sendable {
    /// The key that was looked up.
    public var key: CacheKey
    /// The content, when asked for (always present for a memory hit).
    public var bytes: Data?
    /// The absolute path of the complete, immutable content file. It stays valid for at
    /// least `path_grace` after this lookup, whatever eviction or clearing happens. Nil when
    /// the entry exists only in memory (its disk write failed).
    public var path: String?
    /// Content type, dimensions and expiry as stored.
    public var info: CacheEntryInfo
    /// Size of the content in bytes.
    public var byteCount: Int
    /// When the entry was stored.
    public var created: Date
    /// The tier that answered.
    public var source: CacheSource
    /// True when the entry had expired and was returned only because stale reads were asked.
    package var isStale: Bool
    /// The memory entry that answered (a number no other entry gets), nil for a disk hit:
    /// the same number means the same bytes.
    package var memoryEntry: UInt64? = nil
}

/// The source of "now" for expiry, path grace and access times: the system clock in the
/// daemon, a hand-driven one in tests (so that expiry is tested without sleeping).
public struct CacheClock: Sendable {
    let now: @Sendable () -> Double

    /// A clock reading `now()`.
    public init(_ now: @escaping @Sendable () -> Date) {
        self.now = { now().timeIntervalSince1970 }
    }

    /// The wall clock.
    public static let system = CacheClock { Date() }
}

extension Duration {
    /// The duration in seconds, as a Double (for the clock arithmetic of the caches).
    var cacheSeconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
