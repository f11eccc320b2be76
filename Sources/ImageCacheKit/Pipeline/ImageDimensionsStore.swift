/// The real dimensions of images, read from their headers by the thumbnail pipeline, by photo
/// id and by image URL.
///
/// `layout` never fetches (CONTRACT §5): it places each photo with what is known, and decoded
/// dimensions win over the provider's. Every thumbnail fetch records here the moment the header
/// is parsed (before the body ends), so a client that re-asks `layout` after a
/// `thumbnail.dimensions` notification gets the decoded size. Bounded by a count, least
/// recently recorded out first: a day of scrolling cannot grow it without limit.
public final class ImageDimensionsStore: Sendable {
    /// Upright pixel dimensions of an original image.
    public struct Size: Sendable, Hashable, Codable {
        /// Width in pixels, after applying EXIF orientation.
        public var width: Int
        /// Height in pixels, after applying EXIF orientation.
        public var height: Int
        /// A size; both sides are expected to be at least 1.
        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }

    private let byPhoto: MemoryCache<String, Size>
    private let byURL: MemoryCache<String, Size>

    /// - Parameter capacity: sizes kept per index (photo ids, URLs); 100 000 is about 10 MB.
    public init(capacity: Int = 100_000) {
        byPhoto = MemoryCache(costLimit: Int.max, countLimit: max(1, capacity))
        byURL = MemoryCache(costLimit: Int.max, countLimit: max(1, capacity))
    }

    /// Records the decoded size of the image at `url` (credentials removed by the caller's
    /// cache key), and of the photo it belongs to when known.
    public func record(_ size: Size, photo: String?, url: String?) {
        guard size.width > 0, size.height > 0 else { return }
        if let photo { byPhoto.insert(size, forKey: photo, cost: 1) }
        if let url { byURL.insert(size, forKey: url, cost: 1) }
    }

    /// The decoded size of a photo, if one of its images was ever fetched.
    public func decoded(photo: String) -> Size? { byPhoto.value(forKey: photo) }

    /// The decoded size of the image at `url`, if it was ever fetched.
    public func decoded(url: String) -> Size? { byURL.value(forKey: url) }
}
