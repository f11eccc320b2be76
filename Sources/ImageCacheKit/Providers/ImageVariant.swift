import Foundation
import ImageCacheConfig
import ImageCacheProtocol

/// One image a provider offers for a photo, with its pixel size when the answer says it.
///
/// The thumbnail pipeline picks among these (`ProviderPhoto.variant(forWidth:)`) so that it
/// downloads the smallest image that still covers the width a client will draw.
public struct ImageVariant: Sendable, Hashable, Codable {
    /// The provider's size name (`thumb`, `url_m`, `webformat`…), for logs and tests.
    public var name: String
    /// Where to fetch it. Image URLs are public: none carries a key.
    public var url: String
    /// Known pixel width; nil when the provider gives only a nominal size.
    public var width: Int?
    public var height: Int?
    /// The nominal longest edge when exact dimensions are unknown (Flickr's built URLs).
    package var longestEdge: Int?

    public init(name: String, url: String, width: Int?, height: Int?, longestEdge: Int? = nil) {
        self.name = name
        self.url = url
        self.width = width
        self.height = height
        self.longestEdge = longestEdge
    }

    /// The width used to rank variants: the real one, else the nominal longest edge.
    var rankingWidth: Int? { width ?? longestEdge }
}

/// A photo as a provider described it: the contract's `Photo` plus what the engine needs and
/// clients never see — every image variant, Unsplash's resizable original and its
/// download-tracking link.
///
/// This is what the registry remembers by id, so a later `thumbnail.show {photo}` or
/// `download {photo}` can choose a URL without asking the provider again.
public struct ProviderPhoto: Sendable, Hashable, Codable {
    /// What clients see.
    public var photo: Photo
    /// Every fixed-size image, smallest first.
    public var variants: [ImageVariant]
    /// An image service URL that serves any width on demand (Unsplash `raw` + `w`), if any.
    package var resizableURL: String?
    /// The endpoint to call when the photo is downloaded (Unsplash API guidelines), if any.
    package var downloadLocation: String?

    public init(photo: Photo, variants: [ImageVariant], resizableURL: String? = nil, downloadLocation: String? = nil) {
        self.photo = photo
        self.variants = variants.sorted { ($0.rankingWidth ?? 0) < ($1.rankingWidth ?? 0) }
        self.resizableURL = resizableURL
        self.downloadLocation = downloadLocation
    }

    /// The id as `provider:id`.
    public var id: String { photo.id }

    /// The image to fetch so that at least `width` pixels are available: the smallest variant
    /// at least that wide, or the largest when none is (the original is narrower).
    ///
    /// Unsplash's imgix service scales and transcodes on demand, so there the answer is `raw`
    /// with `w` set to exactly the width (never more than the original), `fm` from `format`
    /// (`image_format`; WebP by default, the smallest the daemon decodes at this `q`) and `q=80`: no
    /// wasted bytes. Downloads pass `.jpg` (a saved photo should open anywhere).
    package func variant(forWidth width: Int, format: ProviderImageFormat = .jpg) -> ImageVariant {
        let wanted = max(1, width)
        let exact = max(1, min(wanted, photo.width ?? wanted))
        if let resizableURL, let url = Self.resized(resizableURL, width: exact, format: format) {
            let w = exact
            let h = photo.width.flatMap { ow in photo.height.flatMap { Proportion.rescale($0, numerator: w, denominator: ow) } }
            return ImageVariant(name: "raw", url: url, width: w, height: h)
        }
        let ranked = variants.filter { $0.rankingWidth != nil }
        if let fit = ranked.first(where: { $0.rankingWidth! >= wanted }) { return fit }
        if let largest = ranked.last { return largest }
        // No sizes at all: the full image is the only safe answer.
        return ImageVariant(name: "full", url: photo.fullURL ?? photo.thumbURL, width: photo.width, height: photo.height)
    }

    /// `raw` with the imgix parameters for one exact width and format (replacing any already
    /// there; `dpr` too, since `w` is already in device pixels).
    static func resized(_ raw: String, width: Int, format: ProviderImageFormat = .jpg) -> String? {
        guard var components = URLComponents(string: raw) else { return nil }
        var items = (components.queryItems ?? []).filter { !["w", "fm", "q", "h", "fit", "dpr"].contains($0.name) }
        items.append(URLQueryItem(name: "w", value: String(width)))
        items.append(URLQueryItem(name: "fm", value: format.fm))
        items.append(URLQueryItem(name: "q", value: "80"))
        components.queryItems = items
        return components.string
    }
}
