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

    /// The MIME type, for thumbnails and downloads (its codec's).
    package var mimeType: String { codec.mimeType }

    /// The extension a downloaded file of this format is saved with (its codec's first).
    package var fileExtension: String { codec.fileExtensions[0] }

    /// The format whose files carry `ext` (any case), if any.
    package static func named(byExtension ext: String) -> ImageFormat? {
        let lowered = ext.lowercased()
        return allCases.first { $0.codec.fileExtensions.contains(lowered) }
    }

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

    /// Sniffs a possibly partial buffer by asking each codec in turn: the first whose magic
    /// number matches decides; otherwise `.needMore` while the bytes so far are a prefix of some
    /// magic number, so a probe on the first chunk of a body never guesses.
    static func sniff(_ reader: ByteReader) -> SniffResult {
        var couldMatch = false
        for codec in codecs {
            switch codec.sniff(reader) {
            case .format(let format): return .format(format)
            case .needMore: couldMatch = true
            case .unknown: break
            }
        }
        return couldMatch ? .needMore : .unknown
    }

    /// A `decode_failed` error for bytes no magic number matches, quoting what was seen.
    static func unrecognised(_ reader: ByteReader) -> ImagingError {
        let shown = (0..<min(reader.count, 8)).map { index -> String in
            let byte = reader.bytes[index]
            let hex = String(byte, radix: 16, uppercase: true)
            return byte < 0x10 ? "0" + hex : hex
        }
        let seen = reader.count == 0 ? "no bytes" : "starts with \(shown.joined(separator: " "))"
        let names = codecs.map { $0.name }
        let known = names.dropLast().joined(separator: ", ") + (names.count > 1 ? " or " : "") + (names.last ?? "")
        return ImagingError.decodeFailed("not a \(known) image: \(seen)", format: nil)
    }
}
