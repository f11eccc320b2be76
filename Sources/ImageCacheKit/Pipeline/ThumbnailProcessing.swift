import Foundation
import ImageCacheProtocol

/// Turns a complete image body into the bytes a grid slot gets, by the contract's rule for
/// `thumbnail.show`: an image at least twice as wide as `size` is scaled to exactly `size`; a
/// narrower one is delivered as it is (decoded once to prove it is a picture), unless its EXIF
/// orientation is not 1, when it is re-encoded upright so the file's pixels match the reported
/// width and height, or it is not clean (`DeliveredFileRules`: more than a small cap of
/// metadata, a damaged trailer, more bytes than its pixels justify), when it is re-encoded
/// without its metadata. Either way the delivered width is at least `size` (unless the
/// original is narrower) and less than `2 × size`, and its bytes are bounded by its pixels.
///
/// Synchronous and CPU-bound: the pipeline runs it under its `DecodeBudget`, admitted by
/// `cost(of:size:maxPixels:)`, off the cooperative pool.
enum ThumbnailProcessing {
    /// A processed body, ready for the cache.
    struct Output: Sendable {
        var bytes: [UInt8]
        var width: Int
        var height: Int
        var mime: String
        /// The original's upright size (what `layout` records as decoded).
        var original: ImageHeader
        /// The placeholder of the decoded pixels, when asked for (docs/protocol.md, "Placeholders").
        var placeholder: ImagePlaceholder? = nil
    }

    /// What `process` will cost for the same arguments, from the header and markers alone
    /// (it takes the same branch: a thumbnail or a validation).
    /// - Throws: what `process` throws before decoding (`too_large`, `decode_failed`).
    static func cost(of body: UnsafeRawBufferPointer, size: Int, maxPixels: Int) throws(ImagingError) -> DecodeCost {
        let header = try ImageHeaderProbe.header(ofComplete: body)
        try header.checkPixelLimit(maxPixels)
        // GIF, WebP and AVIF are never passed through (clients get JPEG or PNG): always re-encoded.
        let reencoded = header.format != .jpeg && header.format != .png
        let width = header.width >= 2 * size || header.orientation != .up || reencoded
            ? (header.width >= 2 * size ? size : header.width) : nil
        return try Thumbnailer.cost(body, width: width, maxPixels: maxPixels)
    }

    /// - Throws: `too_large` over `maxPixels` (even for an otherwise damaged image),
    ///   `decode_failed` for anything that is not a wholly decodable image. GIF, WebP and AVIF
    ///   are always re-encoded (`ImageMetadataCensus` never finds them intact).
    /// - Parameter placeholder: also compute the image's placeholder from the pixels decoded
    ///   either way (the thumbnail's, or those validation decodes), never decoding twice.
    static func process(_ body: [UInt8], size: Int, quality: Int, maxPixels: Int,
                        placeholder: Bool = false) throws(ImagingError) -> Output {
        let (header, clean) = try withRawBytes(body) { (raw) throws(ImagingError) -> (ImageHeader, Bool) in
            let header = try ImageHeaderProbe.header(ofComplete: raw)
            return (header, DeliveredFileRules.allowsPassThrough(raw, header: header))
        }
        try header.checkPixelLimit(maxPixels)
        if header.width >= 2 * size || header.orientation != .up || !clean {
            let target = header.width >= 2 * size ? size : header.width
            let thumbnail = try Thumbnailer.makeThumbnail(from: body, width: target, quality: quality, maxPixels: maxPixels,
                                                          placeholder: placeholder)
            return Output(bytes: thumbnail.bytes, width: thumbnail.width, height: thumbnail.height,
                          mime: thumbnail.mimeType, original: header, placeholder: thumbnail.placeholder)
        }
        let (validated, computed) = try Thumbnailer.validated(body, maxPixels: maxPixels, placeholder: placeholder)
        return Output(bytes: body, width: validated.width, height: validated.height,
                      mime: validated.format.mimeType, original: header, placeholder: computed)
    }
}

/// A fetched body through `ThumbnailProcessing` exactly as the pipeline takes it on a cold
/// fetch (its cost for the budget, then its processing, with the placeholder), without the
/// budget, the cache or the network: what the benchmark runner's `thumbnail-cpu` times from
/// outside the package, so that the CPU figure is the pipeline's own code.
public enum ColdThumbnailProcessing {
    /// The delivered bytes and their MIME type.
    public static func run(_ body: [UInt8], size: Int, quality: Int = Thumbnailer.defaultQuality,
                           maxPixels: Int = Thumbnailer.defaultMaxPixels,
                           placeholder: Bool = true) throws(ImagingError) -> (bytes: [UInt8], mime: String) {
        _ = try withRawBytes(body) { (raw) throws(ImagingError) -> DecodeCost in
            try ThumbnailProcessing.cost(of: raw, size: size, maxPixels: maxPixels)
        }
        let output = try ThumbnailProcessing.process(body, size: size, quality: quality, maxPixels: maxPixels,
                                                     placeholder: placeholder)
        return (output.bytes, output.mime)
    }
}
