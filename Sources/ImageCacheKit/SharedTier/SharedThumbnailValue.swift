/// A thumbnail as the fleet's shared tier holds it: a small versioned header, then the
/// delivered image's bytes exactly as a host wrote them to its own disk cache.
///
/// Layout (version 1, integers big-endian):
///
///     "ICT" 0x01        magic and version
///     u8 format         0 jpeg, 1 png, 2 gif, 3 webp (`ImageFormat.allCases` order)
///     u32 width, u32 height                    the delivered image's (upright) size
///     u32 originalWidth, u32 originalHeight    the original's, for `layout`
///     8 bytes identity  SHA-256 of the entry's key (image URL without credentials, size), cut
///     32 bytes checksum SHA-256 of the image bytes
///     image bytes
///
/// A value read from memcached is outside input: `decode` refuses a wrong magic or version, a
/// value made for another key (a hashed key's collision, a planted value), a checksum that
/// does not match, and image bytes whose own header does not read as the format and size the
/// header claims. A refused value is a miss (and is deleted by the caller).
package struct SharedThumbnailValue: Sendable, Equatable {
    public var format: ImageFormat
    public var width: Int
    public var height: Int
    package var originalWidth: Int
    package var originalHeight: Int
    public var image: [UInt8]

    /// The header's size before the image bytes.
    package static let headerBytes = 4 + 1 + 16 + 8 + 32
    private static let magic: [UInt8] = [0x49, 0x43, 0x54, 0x01]

    public init(format: ImageFormat, width: Int, height: Int, originalWidth: Int, originalHeight: Int, image: [UInt8]) {
        self.format = format
        self.width = width
        self.height = height
        self.originalWidth = originalWidth
        self.originalHeight = originalHeight
        self.image = image
    }

    /// The tier's key for a thumbnail of `url` (without credentials) drawn `size` wide: the
    /// delivered width can differ from `size` (a narrower original is delivered as it is), so
    /// the request's identity, as the host's own coalescing keys it, names the value.
    public static func key(url: String, size: Int) -> String { "t1:\(size):\(url)" }

    /// The bytes to store under `key`.
    package func encoded(key: String) -> [UInt8] {
        var out = Self.magic
        out.reserveCapacity(Self.headerBytes + image.count)
        out.append(UInt8(ImageFormat.allCases.firstIndex(of: format) ?? 0))
        for value in [width, height, originalWidth, originalHeight] { Self.append(UInt32(clamping: value), to: &out) }
        out += Self.identity(key)
        out += SHA256Digest.digest(image)
        out += image
        return out
    }

    /// The value in `bytes` if it is a sound one made for `key`; nil otherwise.
    public static func decode(_ bytes: [UInt8], key: String) -> SharedThumbnailValue? {
        decodeVerified(bytes, key: key)?.value
    }

    /// `decode`, with the SHA-256 of the image it verified: the disk cache keeps that same
    /// digest as the entry's checksum, so a shared-tier hit, whose answer waits for its file,
    /// does not hash the image a second time.
    package static func decodeVerified(_ bytes: [UInt8], key: String) -> (value: SharedThumbnailValue, checksum: [UInt8])? {
        guard bytes.count > headerBytes, Array(bytes[0..<4]) == magic else { return nil }
        let formatIndex = Int(bytes[4])
        guard formatIndex < ImageFormat.allCases.count else { return nil }
        let format = ImageFormat.allCases[formatIndex]
        let numbers = (0..<4).map { index -> Int in
            let base = 5 + index * 4
            return Int(UInt32(bytes[base]) << 24 | UInt32(bytes[base + 1]) << 16 | UInt32(bytes[base + 2]) << 8 | UInt32(bytes[base + 3]))
        }
        guard Array(bytes[21..<29]) == identity(key) else { return nil }
        let image = Array(bytes[headerBytes...])
        let checksum = SHA256Digest.digest(image)
        guard Array(bytes[29..<61]) == checksum else { return nil }
        guard numbers.allSatisfy({ $0 > 0 }),
              let header = try? image.withUnsafeBytes({ raw throws(ImagingError) in try ImageHeaderProbe.header(ofComplete: raw) }),
              header.format == format, header.width == numbers[0], header.height == numbers[1] else { return nil }
        return (SharedThumbnailValue(format: format, width: numbers[0], height: numbers[1],
                                     originalWidth: numbers[2], originalHeight: numbers[3], image: image), checksum)
    }

    private static func identity(_ key: String) -> [UInt8] {
        Array(SHA256Digest.digest(Array(key.utf8)).prefix(8))
    }

    private static func append(_ value: UInt32, to out: inout [UInt8]) {
        out += [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}
