import ImageCacheProtocol

/// The answer of a header probe on the bytes received so far.
public enum ProbeResult: Sendable, Hashable {
    /// The header has not fully arrived; call again with more bytes.
    case needMore
    /// The header is complete; nothing after it was needed.
    case header(ImageHeader)
}

/// Reads an image's dimensions from the first bytes of its body, before the body completes.
///
/// The pipeline calls this as chunks arrive so that `thumbnail.dimensions` can go out and a
/// grid can be laid out while the rest downloads. It only reads what is in the buffer (no
/// copies, no allocation on the JPEG/PNG path) and costs well under a microsecond for a
/// typical header; a JPEG's APPn segments are skipped by their length, so a 60 KB EXIF block
/// only needs its own bytes when it is the EXIF one (for the orientation).
public enum ImageHeaderProbe {
    /// Probes a possibly partial body.
    ///
    /// - Returns: `.needMore` until the header is complete, then `.header`.
    /// - Throws: `decode_failed` when the bytes are no known format or the header is invalid
    ///   (with `data.format` once sniffed). It does not apply a pixel limit; call
    ///   `ImageHeader.checkPixelLimit(_:)` on the result for that.
    public static func probe(_ bytes: UnsafeRawBufferPointer) throws(ImagingError) -> ProbeResult {
        let reader = ByteReader(bytes)
        switch ImageFormat.sniff(reader) {
        case .needMore:
            return .needMore
        case .unknown:
            throw ImageFormat.unrecognised(reader)
        case .format(let format):
            switch format.codec.parseHeader(reader) {
            case .header(let header): return .header(header)
            case .needMore: return .needMore
            case .failed(let why): throw ImagingError.decodeFailed("\(format.rawValue.uppercased()): \(why)", format: format)
            }
        }
    }

    /// Probes bytes held in an array (the usual shape of a body accumulated in memory).
    public static func probe(_ bytes: [UInt8]) throws(ImagingError) -> ProbeResult {
        try withRawBytes(bytes) { (raw) throws(ImagingError) -> ProbeResult in try probe(raw) }
    }

    /// Reads the header of a complete body: "need more" means the body is truncated.
    public static func header(ofComplete bytes: UnsafeRawBufferPointer) throws(ImagingError) -> ImageHeader {
        switch try probe(bytes) {
        case .header(let header): return header
        case .needMore:
            let format: ImageFormat? = {
                if case .format(let format) = ImageFormat.sniff(ByteReader(bytes)) { return format }
                return nil
            }()
            throw ImagingError.decodeFailed("the body ends before the image header is complete", format: format)
        }
    }
}
