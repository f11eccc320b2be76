import ImageCacheConfig
import ImageCacheProtocol

/// Where a thumbnail request's bytes come from and under which keys they are cached.
///
/// The contract keys a thumbnail by its image URL (credentials removed) and its delivered
/// width. The delivered width is `size` when the fetched image is at least twice as wide, and
/// the image's own width otherwise, which for a client URL is only known after decoding: a
/// width note (`CacheKey.thumbnailWidthNote`) then remembers it for the next request.
struct FetchPlan: Sendable, Hashable {
    /// The URL to fetch (it may carry a provider's parameters; never logged unredacted).
    var url: String
    /// The URL without credentials: the identity of the image in keys and in the
    /// dimensions store.
    var cleanURL: String
    /// The requested drawing width.
    var size: Int
    /// The fetched image's width when the provider said it (a variant's width).
    var knownWidth: Int?
    /// The photo id, for the dimensions store and the answer.
    var photoID: String?
    /// The photo's own placeholder as its provider sent it (Unsplash), which wins over one
    /// computed from the pixels (docs/protocol.md, "Placeholders").
    var ownBlurHash: String?
    /// See `ownBlurHash`.
    var ownColor: String?
    /// The photo's own size as its provider stated it, which `thumbnail.dimensions` reports
    /// when the decoded copy agrees (`PhotoDimensions`).
    var providerWidth: Int?
    /// See `providerWidth`.
    var providerHeight: Int?
    /// Whose image this is, as `share_images` names it: the provider (the photo id's prefix)
    /// or `url` for a client's URL.
    var shareSource: String {
        guard let photoID, let colon = photoID.firstIndex(of: ":") else { return "url" }
        return String(photoID[..<colon])
    }

    /// - Parameter format: what to ask a transcoding CDN for (`image_format`).
    init(_ request: ThumbnailRequest, format: ProviderImageFormat = .auto) {
        size = max(1, request.size)
        switch request.image {
        case .photo(let photo):
            let variant = photo.variant(forWidth: size, format: format)
            url = variant.url
            knownWidth = variant.width
            photoID = photo.id
            ownBlurHash = photo.photo.blurHash
            ownColor = photo.photo.color
            providerWidth = photo.photo.width
            providerHeight = photo.photo.height
        case .url(let url):
            self.url = url
            knownWidth = nil
            photoID = nil
        }
        sizedKey = CacheKey.thumbnail(url: url, width: size)
        cleanURL = sizedKey.url ?? url
    }

    /// The key of the entry when it was scaled to exactly `size` (or was exactly that wide);
    /// made once, since every lookup starts with it.
    let sizedKey: CacheKey

    /// The key of the entry delivered as it is, when the provider told its width.
    var knownWidthKey: CacheKey? {
        guard let knownWidth, knownWidth != size, knownWidth < 2 * size else { return nil }
        return CacheKey.thumbnail(url: url, width: knownWidth)
    }

    /// The keys a lookup reads in their order, before any note: the exact size, then the
    /// width the provider said its image has.
    var entryKeys: [CacheKey] {
        guard let knownWidthKey else { return [sizedKey] }
        return [sizedKey, knownWidthKey]
    }

    /// Every key a lookup reads before following a note: whether the cache holds any of
    /// them decides a miss from the indexes alone (`ImageCache.holdsNone`).
    var indexKeys: [CacheKey] { entryKeys + [widthNoteKey] }

    /// The note recording the delivered width when it is not `size`.
    var widthNoteKey: CacheKey { CacheKey.thumbnailWidthNote(url: url, size: size) }

    /// Whether the provider sent the whole placeholder, so none need be computed.
    var hasOwnPlaceholder: Bool { ownBlurHash != nil && ownColor != nil }

    /// The placeholder to remember and send: the provider's values where it sent them, the
    /// computed ones for the rest; nil when neither has both.
    func placeholder(computed: ImagePlaceholder?) -> ImagePlaceholder? {
        if let computed { return computed.under(blurHash: ownBlurHash, color: ownColor) }
        guard let ownBlurHash, let ownColor else { return nil }
        return ImagePlaceholder(blurHash: ownBlurHash, color: ownColor)
    }

    /// The `dimensions` event for a decoded copy of `width`×`height`: the photo's own size
    /// where its provider's agrees (`PhotoDimensions`), and each placeholder field from
    /// whichever source has it (the provider's wins).
    func dimensionsEvent(copyWidth width: Int, copyHeight height: Int, placeholder: ImagePlaceholder?) -> ThumbnailEvent {
        let size = PhotoDimensions.resolve(providerWidth: providerWidth, providerHeight: providerHeight,
                                           decoded: .init(width: width, height: height))
        return .dimensions(width: size?.width ?? width, height: size?.height ?? height,
                           blurHash: ownBlurHash ?? placeholder?.blurHash, color: ownColor ?? placeholder?.color)
    }

    /// One fetch per image and requested width: every demand with the same identity shares it.
    var fetchKey: FetchKey { FetchKey(url: cleanURL, size: size) }
}

/// The identity of one shared fetch.
struct FetchKey: Sendable, Hashable {
    var url: String
    var size: Int
}
