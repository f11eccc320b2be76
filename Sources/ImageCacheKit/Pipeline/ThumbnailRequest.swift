import Foundation
import ImageCacheProtocol

/// One party's wish for a thumbnail: which image, how wide it will be drawn, how urgently.
///
/// Many requests for the same image and width share one fetch (`ImagePipeline`); each request
/// is one *demand* on it, withdrawn when the task awaiting it is cancelled (a recycled slot, a
/// cancelled prefetch, a closed session). The fetch runs at the highest priority among its
/// demands and stops when none is left.
public struct ThumbnailRequest: Sendable, Hashable {
    /// Where the image comes from.
    public enum Image: Sendable, Hashable {
        /// A photo the daemon returned earlier: the pipeline picks the smallest provider variant
        /// at least `size` wide.
        case photo(ProviderPhoto)
        /// An image URL given by the client, fetched as it is.
        case url(String)
    }

    /// Which image.
    public var image: Image
    /// The width in pixels the client will draw (the protocol's `size`, default `thumbnail_size`).
    public var size: Int
    /// Visible slots go ahead of prefetches in the network queue.
    package var priority: TransferPriority
    /// Whether the caller wants the bytes too (`inline: true`), not just the path.
    package var wantsBytes: Bool

    /// A request for `image` drawn `size` pixels wide.
    public init(image: Image, size: Int, priority: TransferPriority = .visible, wantsBytes: Bool = false) {
        self.image = image
        self.size = size
        self.priority = priority
        self.wantsBytes = wantsBytes
    }

    /// The photo id, or nil for a URL request (the contract's `photo: null`).
    package var photoID: String? {
        if case .photo(let photo) = image { return photo.id }
        return nil
    }
}

/// What a request learns while its fetch runs. Delivered in order, from the engine's thread:
/// a handler must be quick (it forwards a notification and returns).
public enum ThumbnailEvent: Sendable, Hashable {
    /// Body bytes received so far and the expected total (when the server said it): at most
    /// every 100 ms, plus a final one.
    case progress(received: Int, total: Int?)
    /// The original image's upright size, read from its header before the body is complete,
    /// with the image's placeholder when it is known by then (its provider's, or remembered
    /// from an earlier decode; docs/protocol.md, "Placeholders").
    case dimensions(width: Int, height: Int, blurHash: String? = nil, color: String? = nil)
}

/// A thumbnail ready to draw: an immutable, complete file inside `cache_dir`.
public struct ThumbnailDelivery: Sendable, Hashable {
    /// Absolute path of the file, valid for at least `path_grace` whatever eviction happens.
    public var path: String
    /// Width of the delivered image, read by decoding it.
    public var width: Int
    /// Height of the delivered image, read by decoding it.
    public var height: Int
    /// The file's size in bytes.
    public var bytes: Int
    /// `image/jpeg` or `image/png`.
    public var mime: String
    /// Which tier answered: memory, disk, or the network.
    public var source: ThumbnailSource
    /// The file's bytes, when the request asked for them (`inline: true`).
    public var data: Data?
    /// The memory entry `data` came from (`CacheHit.memoryEntry`), nil when it did not come
    /// from memory: an inline answer may reuse what it derived from the same entry before.
    package var memoryEntry: UInt64?

    /// A delivery as the pipeline makes it.
    public init(path: String, width: Int, height: Int, bytes: Int, mime: String, source: ThumbnailSource, data: Data?,
                memoryEntry: UInt64? = nil) {
        self.path = path
        self.width = width
        self.height = height
        self.bytes = bytes
        self.mime = mime
        self.source = source
        self.data = data
        self.memoryEntry = memoryEntry
    }
}
