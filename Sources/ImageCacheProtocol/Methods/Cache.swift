extension Methods {
    /// `cache.evict`: removes one image's entries (every size) from memory and disk.
    public enum CacheEvict: RPCMethod {
        public typealias Params = CacheEvictParams
        public typealias Result = CacheRemovalResult
        public static let name = MethodName.cacheEvict
    }

    /// `cache.clear`: empties a part of the cache.
    public enum CacheClear: RPCMethod {
        public typealias Params = CacheClearParams
        public typealias Result = CacheRemovalResult
        public static let name = MethodName.cacheClear
    }
}

/// Params of `cache.evict`: a photo id or an image URL.
public struct CacheEvictParams: RPCParams, Hashable {
    /// The image whose entries (every delivered size) go.
    public var image: ImageReference

    public init(image: ImageReference) {
        self.image = image
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case photo, url }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        image = try ImageReference.decode(from: c, photoKey: .photo, urlKey: .url)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try image.encode(to: &c, photoKey: .photo, urlKey: .url, nullOther: false)
    }

    public func validate() throws(RPCError) {
        try FieldCheck.reference(image)
    }
}

/// The part of the cache `cache.clear` empties.
public enum CacheClearTarget: String, ParamEnum {
    /// Every thumbnail (memory and disk); recorded dimensions stay.
    case thumbnails
    /// Every cached search page (memory and disk).
    case searches
    /// Both.
    case all
}

/// Params of `cache.clear`; `what` is required, so nothing is emptied by accident.
public struct CacheClearParams: RPCParams, Hashable {
    /// Which part to empty.
    public var what: CacheClearTarget

    public init(what: CacheClearTarget) {
        self.what = what
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case what }
}

/// The answer to `cache.evict` and `cache.clear`. Files still inside their `path_grace`
/// are counted as removed though they stay readable until it ends.
public struct CacheRemovalResult: Codable, Sendable, Hashable {
    /// Entries removed (memory and disk together).
    public var removed: Int
    /// Bytes freed on disk.
    public var bytes: Int

    public init(removed: Int, bytes: Int) {
        self.removed = removed
        self.bytes = bytes
    }
}
