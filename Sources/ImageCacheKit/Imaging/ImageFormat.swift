import ImageCacheProtocol

/// An image container recognised by its first bytes (its magic number).
///
/// The URL's extension and the server's Content-Type lie often enough (the corpus holds a
/// `.jpg` that is a PNG) that the daemon trusts only the content. Every case is decoded
/// (GIF, WebP and AVIF to their first frame); the raw value is the `data.format` of
/// errors and the extension of downloaded files.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    /// JPEG (SOI, FF D8): decoded with TurboJPEG.
    case jpeg
    /// PNG (its 8-byte signature): decoded with libpng.
    case png
    /// GIF87a/GIF89a: decoded with giflib (the first frame, transparency kept).
    case gif
    /// RIFF…WEBP (VP8, VP8L, VP8X): decoded with libwebp (an animation's first frame).
    case webp
    /// An ISO-BMFF `ftyp` box with the `avif` or `avis` brand: decoded with libavif (the
    /// primary image, any bit depth, to 8 bits).
    case avif

    /// The MIME type, for thumbnails and downloads.
    package var mimeType: String {
        switch self {
        case .jpeg: return "image/jpeg"
        case .png: return "image/png"
        case .gif: return "image/gif"
        case .webp: return "image/webp"
        case .avif: return "image/avif"
        }
    }

    /// Whether Imaging can decode this format: every recognised one (kept so
    /// that a format recognised before it is decoded has one place to say so).
    package var isDecodable: Bool { true }

    /// The format whose magic number starts `bytes`, or nil when none matches (including
    /// when too few bytes have arrived to tell; `ImageHeaderProbe` distinguishes that case).
    package static func sniff(_ bytes: [UInt8]) -> ImageFormat? {
        bytes.withUnsafeBytes { raw in
            if case .format(let format) = sniff(ByteReader(raw)) { return format }
            return nil
        }
    }

    enum SniffResult {
        case format(ImageFormat)
        case needMore
        case unknown
    }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// SOI alone: libjpeg accepts junk between SOI and the next marker, and so does the walk.
    static let jpegMagic: [UInt8] = [0xFF, 0xD8]
    static let gif87: [UInt8] = Array("GIF87a".utf8)
    static let gif89: [UInt8] = Array("GIF89a".utf8)
    static let riffMagic: [UInt8] = Array("RIFF".utf8)
    static let webpMagic: [UInt8] = Array("WEBP".utf8)

    /// Sniffs a possibly partial buffer: `.needMore` while the bytes so far are a prefix of
    /// some magic number, so a probe on the first chunk of a body never guesses.
    static func sniff(_ reader: ByteReader) -> SniffResult {
        if reader.matches(0, jpegMagic) { return .format(.jpeg) }
        if reader.matches(0, pngSignature) { return .format(.png) }
        if reader.matches(0, gif87) || reader.matches(0, gif89) { return .format(.gif) }
        if reader.matches(0, riffMagic) && reader.matches(8, webpMagic) { return .format(.webp) }
        switch AVIFHeaderParser.sniff(reader) {
        case .format(let format): return .format(format)
        case .needMore: return .needMore
        case .unknown: break
        }
        if isPrefix(reader, of: jpegMagic) || isPrefix(reader, of: pngSignature)
            || isPrefix(reader, of: gif87) || isPrefix(reader, of: gif89) {
            return .needMore
        }
        if reader.count < 12 {
            // RIFF....WEBP: the 4 size bytes in the middle may be anything.
            let prefixOK = (0..<min(reader.count, 4)).allSatisfy { reader.bytes[$0] == riffMagic[$0] }
            let tailOK = (8..<max(8, reader.count)).allSatisfy { reader.bytes[$0] == webpMagic[$0 - 8] }
            if prefixOK && tailOK { return .needMore }
        }
        return .unknown
    }

    private static func isPrefix(_ reader: ByteReader, of magic: [UInt8]) -> Bool {
        guard reader.count < magic.count else { return false }
        for index in 0..<reader.count where reader.bytes[index] != magic[index] { return false }
        return true
    }

    /// A `decode_failed` error for bytes no magic number matches, quoting what was seen.
    static func unrecognised(_ reader: ByteReader) -> ImagingError {
        let shown = (0..<min(reader.count, 8)).map { index -> String in
            let byte = reader.bytes[index]
            let hex = String(byte, radix: 16, uppercase: true)
            return byte < 0x10 ? "0" + hex : hex
        }
        let seen = reader.count == 0 ? "no bytes" : "starts with \(shown.joined(separator: " "))"
        return ImagingError.decodeFailed("not a JPEG, PNG, GIF, WebP or AVIF image: \(seen)", format: nil)
    }
}
