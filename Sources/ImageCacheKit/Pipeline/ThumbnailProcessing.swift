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

    /// What `cost` read of a body and decided for it, handed to `process` of the same body, so
    /// that its header, metadata census and survey are read once.
    struct Plan: Sendable {
        /// The width of the thumbnail to make (upright), or nil to deliver the body as it is
        /// once a validation decode has proved it.
        let width: Int?
        /// The header, survey and cost of that decode.
        let surveyed: Thumbnailer.Surveyed
        /// The pixel limit the header passed, which the decode applies too.
        let maxPixels: Int

        /// What the decode costs: `DecodeBudget` admits it by this.
        var cost: DecodeCost { surveyed.cost }
    }

    /// What `process` will cost for the same arguments, from the header and markers alone,
    /// and the branch it takes (a thumbnail or a validation), decided here once.
    /// - Throws: what `process` throws before decoding (`too_large`, `decode_failed`).
    static func cost(of body: UnsafeRawBufferPointer, size: Int, maxPixels: Int) throws(ImagingError) -> Plan {
        let header = try ImageHeaderProbe.header(ofComplete: body)
        try header.checkPixelLimit(maxPixels)
        // GIF, WebP and AVIF are never clean (clients get JPEG or PNG): always re-encoded.
        let clean = DeliveredFileRules.allowsPassThrough(body, header: header)
        let width = header.width >= 2 * size || header.orientation != .up || !clean
            ? (header.width >= 2 * size ? size : header.width) : nil
        return Plan(width: width, surveyed: try Thumbnailer.surveyed(body, header: header, width: width, maxPixels: maxPixels),
                    maxPixels: maxPixels)
    }

    /// - Throws: `too_large` over `maxPixels` (even for an otherwise damaged image),
    ///   `decode_failed` for anything that is not a wholly decodable image. GIF, WebP and AVIF
    ///   are always re-encoded (`ImageMetadataCensus` never finds them intact).
    /// - Parameter placeholder: also compute the image's placeholder from the pixels decoded
    ///   either way (the thumbnail's, or those validation decodes), never decoding twice.
    static func process(_ body: [UInt8], size: Int, quality: Int, maxPixels: Int,
                        placeholder: Bool = false) throws(ImagingError) -> Output {
        let plan = try withRawBytes(body) { (raw) throws(ImagingError) -> Plan in
            try cost(of: raw, size: size, maxPixels: maxPixels)
        }
        return try process(body, plan: plan, quality: quality, placeholder: placeholder)
    }

    /// `process` of a body by the plan its `cost` made (the same bytes).
    static func process(_ body: [UInt8], plan: Plan, quality: Int, placeholder: Bool = false) throws(ImagingError) -> Output {
        try withRawBytes(body) { (raw) throws(ImagingError) -> Output in
            try process(raw, plan: plan, quality: quality, placeholder: placeholder, whole: body)
        }
    }

    /// `process` of a fetched body where it lives: in memory, delivered as it is without a
    /// copy; spilled to a file, mapped for the call (`TransferBody.withBytes`) and copied only
    /// when delivered as it is.
    /// - Throws: also a `StorageError` when a spilled body's file cannot be opened or mapped.
    static func process(_ body: TransferBody, plan: Plan, quality: Int, placeholder: Bool) throws -> Output {
        if case .memory(let bytes) = body {
            return try process(bytes, plan: plan, quality: quality, placeholder: placeholder)
        }
        return try body.withBytes { (raw) throws(ImagingError) -> Output in
            try process(raw, plan: plan, quality: quality, placeholder: placeholder, whole: nil)
        }
    }

    /// `whole`: the same bytes as an array when the caller has one, so delivering them as
    /// they are needs no copy.
    private static func process(_ raw: UnsafeRawBufferPointer, plan: Plan, quality: Int, placeholder: Bool,
                                whole: [UInt8]?) throws(ImagingError) -> Output {
        let header = plan.surveyed.header
        if let width = plan.width {
            let thumbnail = try Thumbnailer.makeThumbnail(from: raw, surveyed: plan.surveyed, width: width, quality: quality,
                                                          maxPixels: plan.maxPixels, placeholder: placeholder)
            return Output(bytes: thumbnail.bytes, width: thumbnail.width, height: thumbnail.height,
                          mime: thumbnail.mimeType, original: header, placeholder: thumbnail.placeholder)
        }
        let (validated, computed) = try Thumbnailer.validated(raw, surveyed: plan.surveyed, maxPixels: plan.maxPixels,
                                                              placeholder: placeholder)
        return Output(bytes: whole ?? [UInt8](raw), width: validated.width, height: validated.height,
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
        let output = try ThumbnailProcessing.process(body, size: size, quality: quality, maxPixels: maxPixels,
                                                     placeholder: placeholder)
        return (output.bytes, output.mime)
    }
}
