import ImageCacheProtocol

/// JPEG, decoded with TurboJPEG at a DCT scale (`JPEGDecoder`), verified while it streams by
/// libjpeg with a suspending source (`StreamingJPEGVerifier`). Its survey is the marker walk
/// (`JPEGScanSurvey`): the scans decide both the cost (every coefficient is kept for a
/// multi-scan frame) and whether the pixels can be right.
enum JPEGCodec: ImageCodec {
    typealias Survey = JPEGScanSurvey

    static let format = ImageFormat.jpeg
    static let name = "JPEG"
    static let mimeType = "image/jpeg"
    /// `jpg` first: the name cameras and providers give JPEG files.
    static let fileExtensions = ["jpg", "jpeg"]

    /// SOI alone: libjpeg accepts junk between SOI and the next marker, and so does the walk.
    static let magic: [UInt8] = [0xFF, 0xD8]

    static func sniff(_ reader: ByteReader) -> ImageFormat.SniffResult {
        if reader.matches(0, magic) { return .format(format) }
        return reader.isIncompletePrefix(of: magic) ? .needMore : .unknown
    }

    static func parseHeader(_ reader: ByteReader) -> HeaderParseOutcome {
        switch JPEGHeaderParser.parse(reader) {
        case .header(let header, _): return .header(header)
        case .needMore: return .needMore
        case .failed(let why): return .failed(why)
        }
    }

    static func survey(_ body: UnsafeRawBufferPointer) -> JPEGScanSurvey {
        JPEGScanSurvey(ByteReader(body))
    }

    /// Decoded at the DCT scale `JPEGDecoder` will use (`thumbnailScale`, or 1/8 for a
    /// validation), with the copy of the scans a thumbnail keeps of a progressive body
    /// (`JPEGDecoder.thumbnailEnd`); refused over the scan or work limit.
    static func decodeCost(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: JPEGScanSurvey,
                           thumbnailWidth: Int?) throws(ImagingError) -> DecodeCost.Decode {
        try DecodeCost.checkLimits(scanCount: survey.scanCount, blockVisits: survey.blockVisits)
        let (width, height) = thumbnailWidth.map {
            JPEGDecoder.thumbnailScale(width: header.storedWidth, height: header.storedHeight, targetWidth: $0)
        } ?? JPEGDecoder.scaledSize(width: header.storedWidth, height: header.storedHeight, covering: 1)
        var bytes = DecodeCost.jpegDecode(survey, scaledWidth: width, scaledHeight: height)
        if thumbnailWidth != nil,
           let end = JPEGDecoder.thumbnailEnd(survey, eighths: JPEGDecoder.eighths(scaledWidth: width, of: header.storedWidth,
                                                                                   scaledHeight: height, height: header.storedHeight)) {
            bytes = bytes.addingClamped(end.addingClamped(2))
        }
        return DecodeCost.Decode(width: width, height: height, channels: survey.components.count == 1 ? 1 : 3,
                                 bytes: bytes,
                                 work: survey.blockVisits,
                                 colourBytes: ColourTransform.memoryBytes(profileBytes: survey.app2Bytes))
    }

    /// At 1/8 scale, the cheapest decode that still reads every scan; its pixels serve the
    /// placeholder.
    static func validate(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: JPEGScanSurvey,
                         maxPixels: Int, placeholder: Bool) throws(ImagingError) -> PixelBuffer? {
        try JPEGDecoder.decode(body, header: header, survey: survey, thumbnailWidth: nil).pixels
    }

    /// At the smallest DCT scale at least twice the target, then Lanczos-3 to the exact size:
    /// the file's YCbCr planes where its colours need no profile (`YCbCrPlanes`), else RGB.
    static func decodeScaled(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: JPEGScanSurvey, width: Int,
                             height: Int, maxPixels: Int, fast: Bool) throws(ImagingError) -> ScaledPicture {
        switch try JPEGDecoder.decodeForThumbnail(body, header: header, survey: survey, width: width, fast: fast) {
        case .planar(let planes): return .planar(planes.resized(width: width, height: height))
        case .interleaved(let pixels): return .interleaved(Resampler.resize(pixels, width: width, height: height))
        }
    }

    static func streamingVerifier(header: ImageHeader, held: [UInt8],
                                  maxPixels: Int) throws(ImagingError) -> any StreamingFormatVerifier {
        let arithmetic = held.withUnsafeBytes { raw -> Bool in
            guard case .header(_, let sofOffset) = JPEGHeaderParser.parse(ByteReader(raw)) else { return false }
            return raw[sofOffset + 1] >= 0xC9 // SOF9–11, 13–15 (0xCC is DAC, never a frame)
        }
        return try StreamingJPEGVerifier(header: header, arithmetic: arithmetic)
    }

    static func metadataCensus(_ reader: ByteReader) -> ImageMetadataCensus {
        ImageMetadataCensus(jpeg: reader)
    }
}
