import ImageCacheProtocol

/// Validates image bodies by decoding them, and makes upright thumbnails of exact width.
///
/// Both entry points first read the header and apply `maxPixels` (docs/protocol.md,
/// "Limits": an image over the limit is `too_large` even when otherwise damaged), so no
/// pixel buffer is ever allocated for a decompression bomb. They are synchronous and
/// CPU-bound: the pipeline runs them off its actors, under a `DecodeBudget` (admitted by
/// `thumbnailCost`/`validationCost`), since a progressive decode holds every DCT coefficient
/// of the image at once.
public enum Thumbnailer {
    /// The default pixel limit, the contract's `max_image_pixels` default.
    public static let defaultMaxPixels = 50_000_000
    /// The default JPEG quality, the contract's `thumbnail_quality` default.
    public static let defaultQuality = 82

    /// Proves a complete body is a picture by decoding it (JPEG at 1/8 scale, the cheapest
    /// decode that still reads every scan; PNG row by row to its last row; GIF, WebP and
    /// AVIF to the end of their first frame).
    ///
    /// - Returns: the header, whose upright `width`/`height` are what the contract reports.
    /// - Throws: `too_large` over `maxPixels`; `decode_failed` (with `data.format` once
    ///   sniffed) for anything not wholly decodable.
    public static func validate(_ bytes: [UInt8], maxPixels: Int = defaultMaxPixels) throws(ImagingError) -> ImageHeader {
        try validated(bytes, maxPixels: maxPixels, placeholder: false).header
    }

    /// `validate`, and with `placeholder` the image's placeholder from the pixels that decode
    /// proves (a JPEG's 1/8 scale; a PNG's rows streamed into a copy of at most 32 pixels a
    /// side instead of into nothing; a first frame), so a delivered-as-is image gets one
    /// without a second decode.
    static func validated(_ bytes: [UInt8], maxPixels: Int,
                          placeholder: Bool) throws(ImagingError) -> (header: ImageHeader, placeholder: ImagePlaceholder?) {
        try withRawBytes(bytes) { (raw) throws(ImagingError) -> (header: ImageHeader, placeholder: ImagePlaceholder?) in
            try validated(raw, surveyed: try surveyed(raw, width: nil, maxPixels: maxPixels), maxPixels: maxPixels,
                          placeholder: placeholder)
        }
    }

    /// `validated` of a body whose validation cost was read already (`surveyed`, with `width`
    /// nil): its header and survey are not read again.
    static func validated(_ raw: UnsafeRawBufferPointer, surveyed: Surveyed, maxPixels: Int,
                          placeholder: Bool) throws(ImagingError) -> (header: ImageHeader, placeholder: ImagePlaceholder?) {
        let header = surveyed.header
        let pixels = try proof(raw, surveyed: surveyed, codec: header.format.codec, maxPixels: maxPixels, placeholder: placeholder)
        guard placeholder, let pixels else { return (header, nil) }
        return (header, ImagePlaceholder.of(pixels.oriented(header.orientation)))
    }

    /// `validated`'s decode by the header's codec, with the survey its cost was read from.
    private static func proof<Codec: ImageCodec>(_ raw: UnsafeRawBufferPointer, surveyed: Surveyed, codec: Codec.Type,
                                                 maxPixels: Int, placeholder: Bool) throws(ImagingError) -> PixelBuffer? {
        try codec.validate(raw, header: surveyed.header, survey: try surveyed.survey(of: codec), maxPixels: maxPixels,
                           placeholder: placeholder)
    }

    /// Makes a thumbnail exactly `width` pixels wide (or the source's width when narrower:
    /// never upscaled), upright, keeping the aspect ratio.
    ///
    /// JPEGs decode at the smallest DCT scale at least twice the target (where the image is
    /// that large), then a Lanczos-3 filter brings them to the exact size. Pixels are converted
    /// to sRGB before scaling (an embedded ICC profile, PNG cHRM/gAMA: `ColourTransform`), so
    /// the output carries no profile: JPEG at `quality`, or PNG when the source has an alpha
    /// channel; nothing of the source's metadata is kept.
    ///
    /// - Parameter fastDecode: TurboJPEG's fast IDCT and upsampling; slightly less exact,
    ///   measured in docs/benchmarks.md (Imaging).
    /// - Parameter placeholder: also compute the thumbnail's `ImagePlaceholder` from its pixels
    ///   (the pipeline's; tens of microseconds, docs/benchmarks.md).
    /// - Throws: as `validate`; `invalid_params` for a width under 1.
    public static func makeThumbnail(from bytes: [UInt8], width: Int, quality: Int = defaultQuality,
                                     maxPixels: Int = defaultMaxPixels,
                                     fastDecode: Bool = false, placeholder: Bool = false) throws(ImagingError) -> Thumbnail {
        guard width >= 1 else { throw ImagingError.invalidWidth }
        return try withRawBytes(bytes) { (raw) throws(ImagingError) -> Thumbnail in
            try thumbnail(raw, surveyed: try surveyed(raw, width: width, maxPixels: maxPixels), width: width, quality: quality,
                          maxPixels: maxPixels, fast: fastDecode, placeholder: placeholder)
        }
    }

    /// `makeThumbnail` of a body whose cost for this `width` was read already (`surveyed`):
    /// its header and survey are not read again.
    static func makeThumbnail(from raw: UnsafeRawBufferPointer, surveyed: Surveyed, width: Int, quality: Int, maxPixels: Int,
                              placeholder: Bool) throws(ImagingError) -> Thumbnail {
        guard width >= 1 else { throw ImagingError.invalidWidth }
        return try thumbnail(raw, surveyed: surveyed, width: width, quality: quality, maxPixels: maxPixels, fast: false,
                             placeholder: placeholder)
    }

    private static func thumbnail(_ raw: UnsafeRawBufferPointer, surveyed: Surveyed, width: Int, quality: Int, maxPixels: Int,
                                  fast: Bool, placeholder: Bool) throws(ImagingError) -> Thumbnail {
        let header = surveyed.header
        let scaled = try scaledPixels(raw, surveyed: surveyed, codec: header.format.codec, width: width, maxPixels: maxPixels,
                                      fast: fast)
        let upright: PixelBuffer
        switch scaled {
        case .planar(let planes):
            let planes = planes.oriented(header.orientation)
            let computed = placeholder ? ImagePlaceholder.of(try planes.rgb()) : nil
            return Thumbnail(bytes: try JPEGEncoder.encode(planes, quality: quality), width: planes.width,
                             height: planes.height, format: .jpeg, source: header, placeholder: computed)
        case .interleaved(let pixels):
            upright = pixels.oriented(header.orientation)
        }
        let computed = placeholder ? ImagePlaceholder.of(upright) : nil
        if upright.channels == 4 {
            return Thumbnail(bytes: try PNGEncoder.encode(upright), width: upright.width,
                             height: upright.height, format: .png, source: header, placeholder: computed)
        }
        let encoded = try JPEGEncoder.encode(upright, quality: quality)
        return Thumbnail(bytes: encoded, width: upright.width, height: upright.height, format: .jpeg, source: header,
                         placeholder: computed)
    }

    /// `makeThumbnail`'s decode by the header's codec, with the survey its cost was read
    /// from: the pixels at the thumbnail's exact size (stored orientation).
    private static func scaledPixels<Codec: ImageCodec>(_ raw: UnsafeRawBufferPointer, surveyed: Surveyed, codec: Codec.Type,
                                                        width: Int, maxPixels: Int, fast: Bool) throws(ImagingError) -> ScaledPicture {
        let (storedWidth, storedHeight) = targetSize(of: surveyed.header, width: width)
        return try codec.decodeScaled(raw, header: surveyed.header, survey: try surveyed.survey(of: codec), width: storedWidth,
                                      height: storedHeight, maxPixels: maxPixels, fast: fast)
    }

    /// What `validate` will cost (`DecodeBudget` admits it by this), computed from the header
    /// and markers alone.
    /// - Throws: as `validate` does before decoding: `too_large`, `decode_failed` (including
    ///   a JPEG over `DecodeCost.scanLimit` scans or `DecodeCost.workLimit`).
    package static func validationCost(of bytes: [UInt8], maxPixels: Int = defaultMaxPixels) throws(ImagingError) -> DecodeCost {
        try withRawBytes(bytes) { (raw) throws(ImagingError) -> DecodeCost in try cost(raw, width: nil, maxPixels: maxPixels) }
    }

    /// What `makeThumbnail(from:width:…)` will cost; throws as `validationCost` does.
    package static func thumbnailCost(of bytes: [UInt8], width: Int,
                                     maxPixels: Int = defaultMaxPixels) throws(ImagingError) -> DecodeCost {
        guard width >= 1 else { throw ImagingError.invalidWidth }
        return try withRawBytes(bytes) { (raw) throws(ImagingError) -> DecodeCost in try cost(raw, width: width, maxPixels: maxPixels) }
    }

    /// The cost of a thumbnail `width` wide, or of a validation when `width` is nil.
    static func cost(_ raw: UnsafeRawBufferPointer, width: Int?, maxPixels: Int) throws(ImagingError) -> DecodeCost {
        try surveyed(raw, width: width, maxPixels: maxPixels).cost
    }

    /// What a decode's cost reads of a body, kept for the decode of the same body: the header,
    /// the codec's survey (a JPEG's marker walk over every byte) and the cost they give. Every
    /// decode starts from one, so the body is probed and walked once, and priced (refused over
    /// the scan or work limit) before any pixel is decoded.
    struct Surveyed: Sendable {
        /// The body's header, within the pixel limit and of a decodable format.
        let header: ImageHeader
        /// The survey of `header.format.codec` (`ImageCodec.Survey`).
        private let survey: any Sendable
        /// What the decode costs, for the width it was read for.
        let cost: DecodeCost

        fileprivate init(header: ImageHeader, survey: any Sendable, cost: DecodeCost) {
            self.header = header
            self.survey = survey
            self.cost = cost
        }

        /// The survey as `codec` reads it: the header's codec, which made it.
        func survey<Codec: ImageCodec>(of codec: Codec.Type) throws(ImagingError) -> Codec.Survey {
            guard let survey = survey as? Codec.Survey else {
                throw ImagingError.library("\(Codec.name)'s survey was read by another codec")
            }
            return survey
        }
    }

    /// The header and survey of a complete body, and the cost of a thumbnail `width` wide
    /// (a validation when nil).
    /// - Throws: as `validate` does before decoding.
    static func surveyed(_ raw: UnsafeRawBufferPointer, width: Int?, maxPixels: Int) throws(ImagingError) -> Surveyed {
        try surveyed(raw, header: try ImageHeaderProbe.header(ofComplete: raw), width: width, maxPixels: maxPixels)
    }

    /// `surveyed` of a body whose header the caller has probed already.
    static func surveyed(_ raw: UnsafeRawBufferPointer, header: ImageHeader, width: Int?,
                         maxPixels: Int) throws(ImagingError) -> Surveyed {
        try header.checkPixelLimit(maxPixels)
        return try surveyed(raw, header: header, width: width, codec: header.format.codec)
    }

    private static func surveyed<Codec: ImageCodec>(_ raw: UnsafeRawBufferPointer, header: ImageHeader, width: Int?,
                                                    codec: Codec.Type) throws(ImagingError) -> Surveyed {
        let survey = codec.survey(raw)
        let cost = try DecodeCost.of(raw, header: header, width: width, codec: codec, survey: survey)
        return Surveyed(header: header, survey: survey, cost: cost)
    }

    /// The stored-orientation size of a thumbnail `width` wide upright (never upscaled), the
    /// height rounded half up. In integers: the sides come from an image's header, and a side
    /// of 0 or a product past `Int.max` must give a size, not a trap (each side is at least 1).
    static func targetSize(of header: ImageHeader, width: Int) -> (storedWidth: Int, storedHeight: Int) {
        let sourceWidth = max(1, header.width)
        let targetWidth = max(1, min(width, sourceWidth))
        let (product, overflow) = max(1, header.height).multipliedReportingOverflow(by: targetWidth)
        let targetHeight = overflow ? max(1, header.height) : max(1, (product + sourceWidth / 2) / sourceWidth)
        return header.orientation.swapsDimensions ? (targetHeight, targetWidth) : (targetWidth, targetHeight)
    }
}
