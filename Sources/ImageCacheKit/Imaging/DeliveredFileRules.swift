import ImageCacheProtocol

/// What a file handed to a client may carry besides its pixels (contract §5, `thumbnail.show`):
/// no ICC profile, EXIF, text or private chunk beyond a small cap, and bytes bounded by its
/// pixels, so one hostile original cannot turn into a 40 MB "thumbnail", a 14 MB inline line
/// or a zTXt bomb in every client.
///
/// - Thumbnails (every re-encoded file) carry only pixels, plus the source's ICC profile when
///   it is at most `maxICCProfileBytes` (an sRGB, Display P3 or Adobe RGB profile is 0.5–3.2
///   KiB); a larger one is dropped. Converting such images to sRGB with a colour-management
///   library instead is issue 24's.
/// - An original narrower than `2 × size` is passed through as it is only when it is clean:
///   its container whole, at most `maxMetadataBytes` of metadata, no compressed PNG metadata,
///   an ICC profile within the cap, and its bytes within `maxBytes`. Otherwise it is re-encoded
///   at its own width, like a thumbnail.
public enum DeliveredFileRules {
    /// Largest ICC profile kept in a thumbnail or a passed-through original (8 KiB).
    public static let maxICCProfileBytes = 8 << 10
    /// Most metadata a passed-through original may carry (64 KiB: one JPEG segment's worth).
    public static let maxMetadataBytes = 64 << 10

    /// The most bytes a delivered file of `width` × `height` may have: 6 bytes per pixel over
    /// the size padded to 16 (TurboJPEG's worst case, `tjBufSize` for 4:4:4, which bounds the
    /// 3 B/px of 4:2:0 thumbnails and the ≤ 4 B/px of stored RGBA PNG), 2 KiB of headers and
    /// tables, and the metadata cap. Saturates instead of overflowing on absurd sizes.
    public static func maxBytes(width: Int, height: Int) -> Int {
        let paddedWidth = (max(1, width) &+ 15) / 16 * 16, paddedHeight = (max(1, height) &+ 15) / 16 * 16
        let (pixels, overflow) = paddedWidth.multipliedReportingOverflow(by: paddedHeight)
        let (bytes, overflow6) = pixels.multipliedReportingOverflow(by: 6)
        guard !overflow, !overflow6, paddedWidth > 0, paddedHeight > 0 else { return Int.max }
        let (total, overflowSum) = bytes.addingReportingOverflow(2048 + maxMetadataBytes)
        return overflowSum ? Int.max : total
    }

    /// Whether `body` (whose header was read) may be delivered as it is.
    static func allowsPassThrough(_ body: UnsafeRawBufferPointer, header: ImageHeader) -> Bool {
        let census = ImageMetadataCensus(body, format: header.format)
        return census.isIntact && !census.hasCompressedMetadata
            && census.metadataBytes <= maxMetadataBytes && census.iccProfileBytes <= maxICCProfileBytes
            && body.count <= maxBytes(width: header.storedWidth, height: header.storedHeight)
    }

    /// The ICC profile a thumbnail keeps: `profile` when within the cap, else none.
    static func keptICCProfile(_ profile: [UInt8]?) -> [UInt8]? {
        guard let profile, !profile.isEmpty, profile.count <= maxICCProfileBytes else { return nil }
        return profile
    }
}
