import ImageCacheProtocol

/// PNG, decoded with libpng's classic reader row by row (`PNGDecoder`: a non-interlaced image
/// is resized band by band, so it never exists at full size), verified while it streams by
/// libpng's progressive reader (`StreamingPNGVerifier`). Its header is IHDR, checked with its
/// CRC; what the cost needs besides (bit depth, interlacing, tRNS, colour chunks) is read from
/// the chunks before the image data.
enum PNGCodec: ImageCodec {
    static let format = ImageFormat.png
    static let name = "PNG"
    static let mimeType = "image/png"
    static let fileExtensions = ["png"]

    static func sniff(_ reader: ByteReader) -> ImageFormat.SniffResult {
        if reader.matches(0, PNGHeaderParser.signature) { return .format(format) }
        return reader.isIncompletePrefix(of: PNGHeaderParser.signature) ? .needMore : .unknown
    }

    static func parseHeader(_ reader: ByteReader) -> HeaderParseOutcome {
        PNGHeaderParser.parse(reader)
    }

    /// A band of rows (or the whole picture for Adam7) at the file's bit depth, with 4
    /// channels when a tRNS chunk adds alpha; a converted thumbnail holds a LittleCMS transform
    /// (the largest profile for iCCP, whose inflated size is unknown).
    static func decodeCost(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: Void,
                           thumbnailWidth: Int?) throws(ImagingError) -> DecodeCost.Decode {
        let reader = ByteReader(body)
        let bitDepth = PNGHeaderParser.bitDepth(reader) ?? 16
        let interlaced = PNGHeaderParser.isInterlaced(reader)
        let channels = header.hasAlpha || PNGHeaderParser.hasTransparencyChunk(reader) ? 4 : (header.components >= 3 ? 3 : 1)
        let sampleBytes = header.storedWidth.multipliedClamped(by: header.storedHeight)
            .multipliedClamped(by: header.components).multipliedClamped(by: bitDepth == 16 ? 2 : 1)
        let colourBytes = switch PNGHeaderParser.colourDeclaration(reader) {
        case .iccProfile: ColourTransform.memoryBytes(profileBytes: ColourTransform.maxProfileBytes)
        case .primaries: ColourTransform.workingBytes
        case .none: 0
        }
        return DecodeCost.Decode(width: header.storedWidth, height: header.storedHeight, channels: channels,
                                 bytes: DecodeCost.pngDecode(width: header.storedWidth, height: header.storedHeight,
                                                             channels: channels, bitDepth: bitDepth, interlaced: interlaced),
                                 work: sampleBytes / 64, colourBytes: colourBytes, resizedWhileDecoding: !interlaced)
    }

    /// Every row through one band, keeping none; with `placeholder`, the rows streamed into
    /// a copy of at most `BlurHash.thumbnailSide` pixels a side instead.
    static func validate(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: Void,
                         maxPixels: Int, placeholder: Bool) throws(ImagingError) -> PixelBuffer? {
        guard placeholder else {
            try PNGDecoder.validate(body)
            return nil
        }
        let scale = max(1, (max(header.storedWidth, header.storedHeight) + BlurHash.thumbnailSide - 1) / BlurHash.thumbnailSide)
        return try PNGDecoder.decode(body, scaledTo: max(1, header.storedWidth / scale),
                                     height: max(1, header.storedHeight / scale))
    }

    static func decodeScaled(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: Void, width: Int,
                             height: Int, maxPixels: Int, fast: Bool) throws(ImagingError) -> ScaledPicture {
        .interleaved(try PNGDecoder.decode(body, scaledTo: width, height: height))
    }

    static func streamingVerifier(header: ImageHeader, held: [UInt8],
                                  maxPixels: Int) throws(ImagingError) -> any StreamingFormatVerifier {
        let bitDepth = held.withUnsafeBytes { PNGHeaderParser.bitDepth(ByteReader($0)) }
        return try StreamingPNGVerifier(header: header, bitDepth: bitDepth)
    }

    static func metadataCensus(_ reader: ByteReader) -> ImageMetadataCensus {
        ImageMetadataCensus(png: reader)
    }
}
