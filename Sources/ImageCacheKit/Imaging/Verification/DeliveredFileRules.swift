import ImageCacheProtocol

/// What a file handed to a client may carry besides its pixels (the protocol's `thumbnail.show`):
/// no ICC profile, EXIF, text or private chunk beyond a small cap, and bytes bounded by its
/// pixels, so one hostile original cannot turn into a 40 MB "thumbnail", a 14 MB inline line
/// or a zTXt bomb in every client.
///
/// - Thumbnails (every re-encoded file) carry only pixels, in sRGB: an image's embedded ICC
///   profile (or PNG cHRM/gAMA) is applied when it is decoded (`ColourTransform`), so the
///   thumbnail needs no profile and carries none.
/// - An original narrower than `2 × size` is passed through as it is only when it is clean:
///   its container whole, at most `maxMetadataBytes` of metadata, no compressed PNG metadata,
///   no colour declaration beyond sRGB (no ICC profile; a PNG's cHRM or gAMA only beside an
///   sRGB chunk), and its bytes within `maxBytes`. Otherwise it is re-encoded at its own
///   width, like a thumbnail, and so converted to sRGB.
package enum DeliveredFileRules {
    /// Most metadata a passed-through original may carry (64 KiB: one JPEG segment's worth).
    package static let maxMetadataBytes = 64 << 10

    /// The most bytes a delivered file of `width` × `height` may have: 6 bytes per pixel over
    /// the size padded to 16 (TurboJPEG's worst case, `tjBufSize` for 4:4:4, which bounds the
    /// 3 B/px of 4:2:0 thumbnails and the ≤ 4 B/px of stored RGBA PNG), 2 KiB of headers and
    /// tables, and the metadata cap. Saturates instead of overflowing on absurd sizes.
    package static func maxBytes(width: Int, height: Int) -> Int {
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
            && census.metadataBytes <= maxMetadataBytes && !census.declaresColours
            && body.count <= maxBytes(width: header.storedWidth, height: header.storedHeight)
    }
}
