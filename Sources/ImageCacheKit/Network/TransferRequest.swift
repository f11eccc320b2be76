#if canImport(Glibc)
import Glibc
#endif

/// One GET the engine should perform: an image for the cache, a download to disk, or a
/// provider API call (through `HTTPFetching`).
public struct TransferRequest: Sendable {
    /// Where a partially downloaded body lies, so a download can continue with `Range` and
    /// `If-Range` instead of starting over (docs/protocol.md, `download`: downloads resume).
    public struct Resume: Sendable {
        /// The file holding the first `offset` bytes of the body (named in messages and in the
        /// result's `.file`); the rest is appended to it.
        public var path: String
        /// The `ETag` (or `Last-Modified`) the partial body came with: sent as `If-Range`, so a
        /// changed resource answers 200 with the whole new body instead of a mismatched tail.
        /// Nil when the body came with none: a `Range` without `If-Range` could splice two
        /// versions of the resource, so the file is then emptied and fetched whole.
        package var validator: String?
        /// The body's complete length when an earlier answer said it: a `206` whose
        /// `Content-Range` total differs is not used.
        public var total: Int?
        /// Opens the partial file for writing at every attempt (the first and each retry):
        /// returns a descriptor, or `-errno`. A download job passes one that re-checks its
        /// folder against the download roots and opens the `.part` beneath it with
        /// `O_NOFOLLOW` (`DirectoryHandle.openForAppend`), so a `.part` or folder swapped for a
        /// symlink during a retry's back-off is refused, never followed.
        public var open: @Sendable () -> Int32

        /// A resume of the file at `path` whose bytes came with `validator`, opened by `open`;
        /// without one, `path` itself is opened (created if missing) without following a
        /// symlink at its last component.
        public init(path: String, validator: String?, total: Int? = nil, open: (@Sendable () -> Int32)? = nil) {
            self.path = path
            self.validator = validator
            self.total = total
            self.open = open ?? {
                let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
                return fd >= 0 ? fd : -errno
            }
        }
    }

    /// How HTTP statuses are treated.
    public enum StatusHandling: Sendable {
        /// Images: 404/410 → `not_found`, 429 → `rate_limited`, other ≥ 400 → `upstream_error`.
        case mapErrors
        /// API calls: every final status is returned to the caller (a provider knows that Flickr
        /// fails with a 200); 5xx and short 429/503 are still retried first.
        case returnAll
    }

    /// Absolute http(s) URL; checked by the URL policy before anything is sent.
    public var url: String
    /// The admission lane; changeable while queued through the handle.
    package var priority: TransferPriority
    /// Extra request headers (an API's `Authorization`, `Accept-Version`).
    public var headers: [(String, String)]
    /// Deliver `.chunk` events as bytes arrive (to probe an image header before the body ends).
    package var deliverChunks: Bool
    /// Continue a partial download (see `Resume`); the body is then always written to its file.
    package var resume: Resume?
    /// Whether statuses become errors (images) or are returned (API calls).
    package var statusHandling: StatusHandling
    /// Keep the whole body in memory whatever its size (API answers, benchmarks); otherwise a
    /// body past the engine's `memoryBodyLimit` streams to a temporary file.
    public var keepInMemory: Bool
    /// The body waits for processing after the transfer (a thumbnail's decode), and its
    /// consumer calls `TransferEngine.release` once done with it: until then it counts toward
    /// the bodies that hold prefetches back (`TransferEngine.Options.prefetchLookAhead`).
    package var awaitsRelease = false

    /// A visible image GET by default: statuses mapped to errors, large bodies to a file.
    public init(url: String, priority: TransferPriority = .visible, headers: [(String, String)] = [],
                deliverChunks: Bool = false, resume: Resume? = nil, statusHandling: StatusHandling = .mapErrors,
                keepInMemory: Bool = false) {
        self.url = url
        self.priority = priority
        self.headers = headers
        self.deliverChunks = deliverChunks
        self.resume = resume
        self.statusHandling = statusHandling
        self.keepInMemory = keepInMemory
    }
}
