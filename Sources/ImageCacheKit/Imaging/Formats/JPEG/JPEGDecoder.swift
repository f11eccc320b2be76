import CJPEGWarnings
import CTurboJPEG
import ImageCacheProtocol

/// Decodes JPEG bodies with TurboJPEG (the 2.1 API), at the smallest DCT scale that keeps a
/// resampling margin over the thumbnail the caller needs (`thumbnailScale`).
///
/// Scaling inside the IDCT is what makes thumbnails cheap: a 2400 px photo decoded at 1/8
/// never materialises its 5.8 million full-size pixels. Policy lives here, not in flags:
/// - the pixels must be right: scans that cannot fill the frame (`JPEGScanSurvey.problem`) and any
///   warning that data was missing or corrupt (`TurboJPEGDiagnostics`; TurboJPEG itself only
///   warns and fills the rest with grey) refuse the body; harmless warnings ("extraneous
///   bytes") do not reject real photos, which `TJFLAG_STOPONWARNING` would; complete scans
///   with a missing EOI are accepted, as browsers do;
/// - `TJFLAG_LIMITSCANS` stops progressive files with absurd scan counts from spinning;
/// - pixels for a thumbnail are converted to sRGB through an embedded ICC profile
///   (`ColourTransform`); CMYK/YCCK decode to CMYK and become RGB through their profile, or
///   in `CMYKConverter` without a usable one.
enum JPEGDecoder {
    struct Decoded {
        var pixels: PixelBuffer
        var metadata: JPEGMetadata
    }

    /// Decodes a complete body whose header has been probed (and checked against the limit).
    /// - Parameters:
    ///   - survey: the body's markers, when the caller has walked them already (for the cost).
    ///   - thumbnailWidth: the stored-orientation width of the thumbnail the pixels are for,
    ///     decoded at `thumbnailScale` (with its resampling margin); nil asks for the cheapest
    ///     decode, i.e. validation.
    static func decode(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, survey: JPEGScanSurvey? = nil,
                       thumbnailWidth: Int?, fast: Bool = false) throws(ImagingError) -> Decoded {
        try withFrame(bytes, header: header, survey: survey, thumbnailWidth: thumbnailWidth) { (frame) throws(ImagingError) in
            try interleaved(frame, thumbnailWidth: thumbnailWidth, fast: fast)
        }
    }

    /// A thumbnail's decode: the file's own Y, Cb and Cr planes (`YCbCrPlanes`) when it is a
    /// YCbCr JPEG whose colours need no profile's conversion (which works on RGB), else
    /// interleaved pixels as `decode` gives them, converted to sRGB.
    static func decodeForThumbnail(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, survey: JPEGScanSurvey?,
                                   width: Int, fast: Bool) throws(ImagingError) -> ScaledPicture {
        try withFrame(bytes, header: header, survey: survey, thumbnailWidth: width) { (frame) throws(ImagingError) in
            guard frame.colorspace == Int(TJCS_YCbCr.rawValue), header.components == 3, frame.subsampling >= 0,
                  frame.subsampling != Int(TJSAMP_GRAY.rawValue) else {
                return .interleaved(try interleaved(frame, thumbnailWidth: width, fast: fast).pixels)
            }
            // Looked up once: a profile too big for the cache builds a transform per call.
            guard let transform = frame.metadata.iccProfile.flatMap({ ColourTransformCache.shared.transform(profile: $0, layout: .rgb) }) else {
                return .planar(try planar(frame, fast: fast))
            }
            return .interleaved(try interleaved(frame, thumbnailWidth: width, fast: fast, rgbTransform: transform).pixels)
        }
    }

    /// What every decode reads before its pixels: the checked structure, the frame header
    /// (TurboJPEG's, checked against the probe's) and the scaled size, with the decompressor.
    private struct Frame {
        let handle: tjhandle
        let bytes: UnsafeRawBufferPointer
        let metadata: JPEGMetadata
        let hasEndOfImage: Bool
        /// TurboJPEG's colour space and subsampling (TJCS, TJSAMP), -1 when it did not say.
        let colorspace: Int
        let subsampling: Int
        /// The frame header's component count.
        let components: Int
        let scaledWidth: Int
        let scaledHeight: Int

        var source: UnsafePointer<UInt8> { bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) }
    }

    private static func withFrame<R>(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, survey: JPEGScanSurvey?,
                                     thumbnailWidth: Int?,
                                     _ body: (Frame) throws(ImagingError) -> R) throws(ImagingError) -> R {
        let reader = ByteReader(bytes)
        let metadata = JPEGMetadata(reader)
        guard let scan = metadata.firstScanOffset else {
            throw ImagingError.decodeFailed("JPEG: the body ends before the first scan", format: .jpeg)
        }
        let structure = survey ?? JPEGScanSurvey(reader)
        let hasEndOfImage = JPEGMetadata.hasEndOfImage(reader, after: scan)
        try checkStructure(structure, hasEndOfImage: hasEndOfImage)
        guard let handle = tjInitDecompress() else {
            throw ImagingError.library("TurboJPEG could not allocate a decompressor")
        }
        defer { tjDestroy(handle) }
        let source = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = -1
        let headerRC = tjDecompressHeader3(handle, source, UInt(bytes.count), &width, &height, &subsampling, &colorspace)
        if headerRC == 0 || TurboJPEGDiagnostics.isWarning(lastMessage(handle)) {
            guard Int(width) == header.storedWidth, Int(height) == header.storedHeight else {
                throw ImagingError.decodeFailed("JPEG: the frame header disagrees with the first one", format: .jpeg)
            }
        } else {
            // TurboJPEG 2.1's header call refuses sampling factors it has no name for (4:1:0,
            // 4:4:1…) that tjDecompress2 decodes fine; the frame header's component count then
            // decides the output, and any real damage surfaces in the decode itself.
            colorspace = -1
            subsampling = -1
        }
        let (scaledWidth, scaledHeight) = thumbnailWidth.map {
            thumbnailScale(width: header.storedWidth, height: header.storedHeight, targetWidth: $0)
        } ?? scaledSize(width: header.storedWidth, height: header.storedHeight, covering: 1)
        let frame = { (bytes: UnsafeRawBufferPointer, hasEndOfImage: Bool) in
            Frame(handle: handle, bytes: bytes, metadata: metadata, hasEndOfImage: hasEndOfImage,
                  colorspace: Int(colorspace), subsampling: Int(subsampling), components: header.components,
                  scaledWidth: scaledWidth, scaledHeight: scaledHeight)
        }
        guard thumbnailWidth != nil,
              let end = thumbnailEnd(structure, eighths: eighths(scaledWidth: scaledWidth, of: header.storedWidth,
                                                                  scaledHeight: scaledHeight, height: header.storedHeight)),
              end > scan, end <= bytes.count else {
            return try body(frame(bytes, hasEndOfImage))
        }
        // The scans the thumbnail needs, closed by an EOI: the decoder stops there.
        var shortened = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[0..<end]))
        shortened += [0xFF, JPEGMarkerWalker.eoi]
        let outcome = shortened.withUnsafeBytes { short in
            Result { () throws(ImagingError) in try body(frame(short, true)) }
        }
        return try outcome.get()
    }

    /// Where a thumbnail decoded at `eighths`/8 of the full size may end a progressive body
    /// (`JPEGScanSurvey.droppableTail`), or nil to decode it whole. At 1/8 the luma's IDCT
    /// uses the DC coefficient alone, so its AC scans after the last DC one go (a chroma
    /// subsampled both ways keeps its own: libjpeg-turbo decodes it with a larger IDCT); at
    /// 1/4 the IDCT uses AC coefficients all over the block (libjpeg's 2×2 IDCT reads rows and
    /// columns 0, 1, 3, 5 and 7), and the luma's last bit goes, which cost at most 0.001 SSIM
    /// at any quality; at 1/2 (a 512-px thumbnail of a photo) it goes only from a file
    /// quantized no coarser than libjpeg's quality 75, since there it costs up to 0.012 at
    /// quality 50 and under 0.004 from 75 up (docs/benchmarks.md, "The luma's last bit at
    /// 1/2"), and at 3/8, between the two measured scales, by the same rule. Larger scales read
    /// every scan.
    static func thumbnailEnd(_ structure: JPEGScanSurvey, eighths: Int) -> Int? {
        switch eighths {
        case ...2: return structure.droppableTail(dcOnly: eighths <= 1)
        case 3...4 where structure.firstComponentIsFinelyQuantized: return structure.droppableTail(dcOnly: false)
        default: return nil
        }
    }

    /// The IDCT size, in eighths of the full one, that TurboJPEG picks for a decode to
    /// `scaledWidth` × `scaledHeight` of a frame `width` × `height`: the largest scale whose
    /// size (each side times k/8, rounded up) fits both, so where two scales round to the same
    /// width (a frame a few pixels wide) it is the larger one, as TurboJPEG decodes it.
    static func eighths(scaledWidth: Int, of width: Int, scaledHeight: Int = .max, height: Int = 0) -> Int {
        let fits = { (side: Int, scaled: Int, k: Int) in (side.multipliedClamped(by: k) + 7) / 8 <= scaled }
        return (1...8).last { fits(width, scaledWidth, $0) && fits(height, scaledHeight, $0) } ?? 1
    }

    /// The frame decoded to interleaved pixels: grey, RGB, or CMYK made RGB; converted to sRGB
    /// through an embedded profile when they are for a thumbnail.
    /// `rgbTransform`: the frame's RGB transform when the caller looked it up already.
    private static func interleaved(_ frame: Frame, thumbnailWidth: Int?, fast: Bool,
                                    rgbTransform: ColourTransform? = nil) throws(ImagingError) -> Decoded {
        let (handle, metadata) = (frame.handle, frame.metadata)
        let (scaledWidth, scaledHeight) = (frame.scaledWidth, frame.scaledHeight)
        let format: TJPF
        let channels: Int
        switch (frame.colorspace, frame.components) {
        case (Int(TJCS_CMYK.rawValue), _), (Int(TJCS_YCCK.rawValue), _), (-1, 4): (format, channels) = (TJPF_CMYK, 4)
        case (Int(TJCS_GRAY.rawValue), _), (-1, 1): (format, channels) = (TJPF_GRAY, 1)
        case (-1, 3), (Int(TJCS_RGB.rawValue), _), (Int(TJCS_YCbCr.rawValue), _): (format, channels) = (TJPF_RGB, 3)
        case (_, let components):
            throw ImagingError.decodeFailed("JPEG: \(components) colour components are not supported", format: .jpeg)
        }
        var output = [UInt8](repeating: 0, count: scaledWidth * scaledHeight * channels)
        var warnings = ic_jpeg_warnings()
        let rc = output.withUnsafeMutableBufferPointer { target in
            ic_tj_decompress(handle, frame.source, UInt(frame.bytes.count), target.baseAddress, Int32(scaledWidth), 0,
                             Int32(scaledHeight), Int32(format.rawValue), flags(fast: fast), &warnings)
        }
        try checkOutcome(rc, warnings: warnings, frame: frame)
        // Pixels for a thumbnail are converted to sRGB through the embedded profile (CMYK
        // through it too); without a usable one they are taken as sRGB, and CMYK is converted
        // the naive way. A validation keeps no pixel: it converts nothing it need not.
        let pixelCount = scaledWidth * scaledHeight
        let layout: ColourTransform.Layout = channels == 4 ? .cmyk(inverted: metadata.hasAdobeMarker)
            : (channels == 1 ? .grey : .rgb)
        let transform = thumbnailWidth == nil ? nil
            : rgbTransform ?? metadata.iccProfile.flatMap { ColourTransformCache.shared.transform(profile: $0, layout: layout) }
        if let transform {
            if channels == 4 {
                output = transform.converted(output, pixelCount: pixelCount)
            } else {
                transform.apply(&output, pixelCount: pixelCount)
            }
        } else if channels == 4 {
            output = CMYKConverter.rgb(fromCMYK: output, pixelCount: pixelCount, inverted: metadata.hasAdobeMarker)
        }
        let pixels = PixelBuffer(width: scaledWidth, height: scaledHeight, channels: channels == 4 ? 3 : channels,
                                 pixels: output)
        return Decoded(pixels: pixels, metadata: metadata)
    }

    /// The frame decoded to its Y, Cb and Cr planes at the scaled size, each as the file
    /// subsamples it; the luma cropped to the picture (TurboJPEG pads it to whole chroma samples).
    private static func planar(_ frame: Frame, fast: Bool) throws(ImagingError) -> YCbCrPlanes {
        let subsampling = Int32(frame.subsampling)
        let (width, height) = (frame.scaledWidth, frame.scaledHeight)
        let sides = [0, 1, 2].map { (Int(tjPlaneWidth(Int32($0), Int32(width), subsampling)),
                                     Int(tjPlaneHeight(Int32($0), Int32(height), subsampling))) }
        guard sides.allSatisfy({ $0.0 > 0 && $0.1 > 0 }) else {
            throw ImagingError.decodeFailed("JPEG: TurboJPEG has no planes for this subsampling", format: .jpeg)
        }
        var luma = [UInt8](repeating: 0, count: sides[0].0 * sides[0].1)
        var blue = [UInt8](repeating: 0, count: sides[1].0 * sides[1].1)
        var red = [UInt8](repeating: 0, count: sides[2].0 * sides[2].1)
        var strides = sides.map { Int32($0.0) }
        var warnings = ic_jpeg_warnings()
        let rc = luma.withUnsafeMutableBufferPointer { y in
            blue.withUnsafeMutableBufferPointer { cb in
                red.withUnsafeMutableBufferPointer { cr in
                    var planes: [UnsafeMutablePointer<UInt8>?] = [y.baseAddress, cb.baseAddress, cr.baseAddress]
                    return ic_tj_decompress_to_planes(frame.handle, frame.source, UInt(frame.bytes.count), &planes,
                                                      Int32(width), &strides, Int32(height), flags(fast: fast), &warnings)
                }
            }
        }
        try checkOutcome(rc, warnings: warnings, frame: frame)
        var lumaPlane = PixelBuffer(width: sides[0].0, height: sides[0].1, channels: 1, pixels: luma)
        if sides[0] != (width, height) { lumaPlane = lumaPlane.cropped(width: width, height: height) }
        return YCbCrPlanes(luma: lumaPlane,
                           blue: PixelBuffer(width: sides[1].0, height: sides[1].1, channels: 1, pixels: blue),
                           red: PixelBuffer(width: sides[2].0, height: sides[2].1, channels: 1, pixels: red))
    }

    private static func flags(fast: Bool) -> Int32 {
        fast ? TJFLAG_LIMITSCANS | TJFLAG_FASTDCT | TJFLAG_FASTUPSAMPLE : TJFLAG_LIMITSCANS
    }

    /// A warning also returns -1 in TurboJPEG 2.1; a fatal error means no picture, and a
    /// warning that data was missing or corrupt means a picture partly painted grey.
    private static func checkOutcome(_ rc: Int32, warnings: ic_jpeg_warnings, frame: Frame) throws(ImagingError) {
        if rc != 0 && !TurboJPEGDiagnostics.isWarning(lastMessage(frame.handle)) {
            throw failure(frame.handle)
        }
        if let refusal = TurboJPEGDiagnostics.refusal(warnings, firstMessage: rc == 0 ? "" : lastMessage(frame.handle),
                                                      hasEndOfImage: frame.hasEndOfImage) {
            throw ImagingError.decodeFailed("JPEG: \(refusal)", format: .jpeg)
        }
    }

    /// Refuses scans that cannot carry every pixel (`JPEGScanSurvey.problem`), and a cut
    /// arithmetic-coded body: without an EOI its data runs out into zeros silently. Checked
    /// before decoding, and by `StreamingVerifier` at the end of the body.
    static func checkStructure(_ structure: JPEGScanSurvey, hasEndOfImage: Bool) throws(ImagingError) {
        if let problem = structure.problem(hasEndOfImage: hasEndOfImage) {
            throw ImagingError.decodeFailed("JPEG: \(problem)", format: .jpeg)
        }
        guard hasEndOfImage || !structure.isArithmetic else {
            throw ImagingError.decodeFailed("JPEG: truncated (no end-of-image marker)", format: .jpeg)
        }
    }

    /// The TurboJPEG scaling factors that shrink (1/8 … 1/1), as (num, denom); read once.
    static let shrinkingFactors: [(num: Int, denom: Int)] = {
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return [(1, 1)] }
        return (0..<Int(count)).map { (Int(factors[$0].num), Int(factors[$0].denom)) }
            .filter { $0.num <= $0.denom }
    }()

    /// The size a thumbnail `targetWidth` wide (stored orientation) is decoded at: the
    /// smallest DCT scale at least **twice** the target where the image allows (else the full
    /// size), so the resampler has a margin to filter from, as libvips' shrink-on-load and
    /// Pillow's `reducing_gap` keep one. Decoding at the smallest scale that merely covers the
    /// target measured SSIM 0.956 against 0.98 with the margin (docs/benchmarks.md, "Thumbnail
    /// quality and colour"). `DecodeCost` prices the decode at this same size.
    static func thumbnailScale(width: Int, height: Int, targetWidth: Int) -> (Int, Int) {
        scaledSize(width: width, height: height, covering: max(1, targetWidth).multipliedClamped(by: 2))
    }

    /// The smallest scaled size (TJSCALED) whose width still reaches `covering` pixels, or
    /// the full size when the image is narrower.
    static func scaledSize(width: Int, height: Int, covering: Int) -> (Int, Int) {
        var best = (width, height)
        for factor in shrinkingFactors {
            let scaledWidth = (width * factor.num + factor.denom - 1) / factor.denom
            let scaledHeight = (height * factor.num + factor.denom - 1) / factor.denom
            if scaledWidth >= min(covering, width) && scaledWidth < best.0 {
                best = (scaledWidth, scaledHeight)
            }
        }
        return best
    }

    private static func lastMessage(_ handle: tjhandle) -> String {
        String(cString: tjGetErrorStr2(handle))
    }

    private static func failure(_ handle: tjhandle) -> ImagingError {
        ImagingError.decodeFailed("JPEG: \(lastMessage(handle))", format: .jpeg)
    }
}
