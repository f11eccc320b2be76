extension Methods {
    /// `prefetch`: warms the caches in the background, below every visible request.
    public enum Prefetch: RPCMethod {
        public typealias Params = PrefetchParams
        public typealias Result = PrefetchResult
        public static let name = MethodName.prefetch
    }

    /// `prefetch.cancel`: withdraws queued prefetches of this session.
    public enum PrefetchCancel: RPCMethod {
        public typealias Params = PrefetchCancelParams
        public typealias Result = PrefetchCancelResult
        public static let name = MethodName.prefetchCancel
    }
}

/// Params of `prefetch`: at least one of `photos` and `urls` (either may be empty).
public struct PrefetchParams: RPCParams, Hashable {
    /// Photo ids to warm.
    public var photos: [String]?
    /// Image URLs to warm.
    public var urls: [String]?
    /// The pixel width to warm; nil means the daemon's `thumbnail_size`.
    public var size: Int?

    public init(photos: [String]? = nil, urls: [String]? = nil, size: Int? = nil) {
        self.photos = photos
        self.urls = urls
        self.size = size
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case photos, urls, size }

    public func validate() throws(RPCError) {
        if photos == nil && urls == nil {
            throw .invalidParam("photos", "one of 'photos' or 'urls' is required")
        }
        for (index, id) in (photos ?? []).enumerated() { try FieldCheck.photoID(id, field: "photos[\(index)]") }
        for (index, url) in (urls ?? []).enumerated() { try FieldCheck.url(url, field: "urls[\(index)]") }
        try FieldCheck.size(size)
    }
}

/// The answer to `prefetch`.
public struct PrefetchResult: Codable, Sendable, Hashable {
    /// Items queued (those already cached are not queued, and are reported finished at once).
    public var queued: Int
    public init(queued: Int) {
        self.queued = queued
    }
}

/// Params of `prefetch.cancel`: the named items; with neither key, every queued prefetch of
/// the session.
public struct PrefetchCancelParams: RPCParams, Hashable {
    /// Photo ids to withdraw.
    public var photos: [String]?
    /// Image URLs to withdraw.
    public var urls: [String]?

    public init(photos: [String]? = nil, urls: [String]? = nil) {
        self.photos = photos
        self.urls = urls
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case photos, urls }

    /// True when the request names nothing and so cancels every prefetch of the session.
    public var cancelsAll: Bool { photos == nil && urls == nil }
}

/// The answer to `prefetch.cancel`.
public struct PrefetchCancelResult: Codable, Sendable, Hashable {
    /// Items withdrawn (0 when nothing matched).
    public var cancelled: Int
    public init(cancelled: Int) {
        self.cancelled = cancelled
    }
}

/// `prefetch.finished`: one prefetched item landed in the caches (`ok`), or failed
/// (`error`, an error object (docs/protocol.md, "Errors"); a cancelled one fails with 1007).
public struct PrefetchFinished: RPCNotificationPayload, Hashable {
    public static let name = NotificationName.prefetchFinished
    /// The item, written `photo` or `url` as it was asked for.
    public var image: ImageReference
    /// True when the item is now in the caches.
    public var ok: Bool
    /// Null when `ok`.
    public var error: RPCError?

    public init(image: ImageReference, ok: Bool, error: RPCError? = nil) {
        self.image = image
        self.ok = ok
        self.error = error
    }

    enum CodingKeys: String, CodingKey { case photo, url, ok, error }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        image = try ImageReference.decode(from: c, photoKey: .photo, urlKey: .url)
        ok = try c.decode(Bool.self, forKey: .ok)
        error = try c.decodeIfPresent(RPCError.self, forKey: .error)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try image.encode(to: &c, photoKey: .photo, urlKey: .url, nullOther: false)
        try c.encode(ok, forKey: .ok)
        try c.encode(error, forKey: .error)
    }
}
