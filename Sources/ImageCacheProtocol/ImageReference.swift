/// What an image request names: a photo the daemon returned earlier, or an image URL.
///
/// The contract's `photo? | url?` params (thumbnail.show, download, cache.evict) and the
/// `photo|url` of `prefetch.finished`. Holding exactly one of the two in an enum makes "both"
/// and "neither" impossible past decoding, where they are refused with -32602.
public enum ImageReference: Sendable, Hashable, CustomStringConvertible {
    /// A photo id, `"<provider>:<provider's id>"`.
    case photo(String)
    /// An image URL (https, or http where `allow_http` is set).
    case url(String)

    /// The photo id, or nil for a URL.
    public var photoID: String? {
        if case .photo(let id) = self { return id }
        return nil
    }

    /// The URL, or nil for a photo id.
    public var urlString: String? {
        if case .url(let url) = self { return url }
        return nil
    }

    public var description: String {
        switch self {
        case .photo(let id): return id
        case .url(let url): return url
        }
    }
}

/// The two keys an `ImageReference` is written under.
enum ImageReferenceKeys: String, CodingKey {
    case photo, url
}

extension ImageReference {
    /// Reads `photo` or `url` from `container`; neither or both → -32602, naming `photo`
    /// (neither) or `url` (both).
    static func decode<K: CodingKey>(from container: KeyedDecodingContainer<K>, photoKey: K, urlKey: K) throws -> ImageReference {
        let photo = try container.decodeIfPresent(String.self, forKey: photoKey)
        let url = try container.decodeIfPresent(String.self, forKey: urlKey)
        switch (photo, url) {
        case (let photo?, nil):
            return .photo(photo)
        case (nil, let url?):
            return .url(url)
        case (nil, nil):
            throw RPCError.invalidParam("photo", "one of 'photo' (a photo id) or 'url' (an image URL) is required")
        case (_?, _?):
            throw RPCError.invalidParam("url", "'photo' and 'url' are mutually exclusive: give one of them")
        }
    }

    /// Writes `photo` or `url`; with `nullOther`, the other key is written as null too.
    func encode<K: CodingKey>(to container: inout KeyedEncodingContainer<K>, photoKey: K, urlKey: K, nullOther: Bool) throws {
        switch self {
        case .photo(let id):
            try container.encode(id, forKey: photoKey)
            if nullOther { try container.encodeNil(forKey: urlKey) }
        case .url(let url):
            if nullOther { try container.encodeNil(forKey: photoKey) }
            try container.encode(url, forKey: urlKey)
        }
    }
}

/// Checks of the shapes of ids and URLs that every method shares.
enum FieldCheck {
    /// A photo id is `provider:id` with both parts non-empty.
    static func photoID(_ id: String, field: String) throws(RPCError) {
        guard let colon = id.firstIndex(of: ":"), colon != id.startIndex, id.index(after: colon) != id.endIndex else {
            throw RPCError.invalidParam(field, "'\(field)' must be a photo id of the form \"provider:id\", got \"\(id)\"")
        }
    }

    /// A URL must at least be an absolute http(s) URL; which hosts are allowed is the
    /// daemon's policy (1010), not a params matter.
    static func url(_ url: String, field: String) throws(RPCError) {
        // Compared byte by byte, ignoring ASCII case (no lowercased copy per request: this
        // runs on every thumbnail.show); no other character lowercases to these letters. The
        // scheme must end on a character boundary: a combining mark after its last `/` makes
        // that character another one.
        func hasScheme(_ scheme: StaticString) -> Bool {
            scheme.withUTF8Buffer { scheme in
                url.utf8.count >= scheme.count && zip(url.utf8, scheme).allSatisfy { byte, lower in
                    byte == lower || (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z") && byte == lower - 0x20)
                } && String.Index(url.utf8.index(url.utf8.startIndex, offsetBy: scheme.count), within: url) != nil
            }
        }
        guard hasScheme("https://") || hasScheme("http://"), !url.dropFirst(8).isEmpty else {
            throw RPCError.invalidParam(field, "'\(field)' must be an absolute http(s) URL")
        }
    }

    static func reference(_ ref: ImageReference) throws(RPCError) {
        switch ref {
        case .photo(let id): try photoID(id, field: "photo")
        case .url(let url): try FieldCheck.url(url, field: "url")
        }
    }

    /// A pixel width the client will draw: 1…8192 (larger would only burn memory).
    static func size(_ size: Int?, field: String = "size") throws(RPCError) {
        if let size, !(1...ThumbnailLimits.maxSize).contains(size) {
            throw RPCError.invalidParam(field, "'\(field)' must be between 1 and \(ThumbnailLimits.maxSize) pixels")
        }
    }
}

/// Limits on thumbnail params that the contract leaves open (docs/protocol.md).
public enum ThumbnailLimits {
    /// The largest `size` a client may ask for.
    public static let maxSize = 8192
}
