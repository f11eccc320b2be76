import Foundation

/// What the disk tier knows of one stored entry besides its key: the same facts wherever they
/// are kept — the index row, the description kept with the content file, and the in-memory
/// mirror.
///
/// One value for all three, so a fact added to an entry is added in one place and the copies
/// cannot drift apart (a rebuild from the descriptions gives exactly the rows the index
/// held). Times are seconds since 1970, as the index stores them and `CacheClock` counts.
struct StoredEntry: Equatable, Sendable {
    /// The content's length in bytes.
    var size: Int
    /// SHA-256 of the content, checked on an entry's first read since the cache opened.
    var checksum: CacheDigest
    /// MIME type of the content.
    var contentType: String
    /// Pixel width of an image, when known.
    var width: Int?
    /// Pixel height of an image, when known.
    var height: Int?
    /// When it was stored.
    var created: Double
    /// When it stops being fresh; nil for never.
    var expires: Double?

    /// The facts of content of `size` bytes with `checksum`, stored at `created` with what the
    /// caller said of it.
    init(size: Int, checksum: CacheDigest, info: CacheEntryInfo, created: Double) {
        self.init(size: size, checksum: checksum, contentType: info.contentType, width: info.width,
                  height: info.height, created: created, expires: info.expires?.timeIntervalSince1970)
    }

    /// Every fact given.
    init(size: Int, checksum: CacheDigest, contentType: String, width: Int?, height: Int?,
         created: Double, expires: Double?) {
        self.size = size
        self.checksum = checksum
        self.contentType = contentType
        self.width = width
        self.height = height
        self.created = created
        self.expires = expires
    }

    /// What a caller is told of the entry: what it said when storing it.
    var info: CacheEntryInfo {
        CacheEntryInfo(contentType: contentType, width: width, height: height,
                       expires: expires.map { Date(timeIntervalSince1970: $0) })
    }

    /// Whether the entry is no longer fresh at `now`.
    func isExpired(at now: Double) -> Bool {
        expires.map { $0 <= now } ?? false
    }
}
