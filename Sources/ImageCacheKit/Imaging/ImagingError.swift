import ImageCacheProtocol

/// Why Imaging refused or failed an image: the facts, as fields, that the server's wire
/// mapping turns into `decode_failed` (with `data.format`), `too_large`, `invalid_params` or
/// `internal`. Every message names the format when it was sniffed.
public enum ImagingError: EngineError, Hashable {
    /// Bytes that are not a decodable image: `reason` says what is wrong (prefixed with the
    /// format), `format` is nil when not even the format is known.
    case decodeFailed(_ reason: String, format: ImageFormat?)
    /// An image whose declared pixel count exceeds the configured limit.
    case tooLarge(width: Int, height: Int, maxPixels: Int)
    /// A decode that needs `bytes` of memory where a large decode may hold `budget`, out of
    /// `decodeMemory` configured: the decode budget can never admit it.
    case needsMoreMemory(bytes: Int, budget: Int, decodeMemory: Int)
    /// A thumbnail width below 1 (the `size` param).
    case invalidWidth
    /// A library failed for a reason that is not the image's (it could not allocate, or
    /// could not encode our own pixels), or Imaging was used out of order: a bug or a
    /// machine in trouble.
    case library(String)

    public var kind: ErrorKind {
        switch self {
        case .decodeFailed: return .decodeFailed
        case .tooLarge, .needsMoreMemory: return .tooLarge
        case .invalidWidth: return .invalidParams
        case .library: return .internal
        }
    }

    /// The sniffed format, for `decode_failed`.
    public var format: ImageFormat? {
        if case .decodeFailed(_, let format) = self { return format }
        return nil
    }

    /// The param at fault, for `invalid_params`.
    public var field: String? {
        if case .invalidWidth = self { return "size" }
        return nil
    }

    /// The message for a person.
    public var description: String {
        switch self {
        case .decodeFailed(let reason, _):
            return reason
        case .tooLarge(let width, let height, let maxPixels):
            // Declared sizes are at most 65535 (JPEG) or 2^31-1 (PNG) each: the product of two
            // outside numbers is checked, and said as "more than Int" rather than trapping.
            let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
            return "image is \(width)×\(height) = \(overflow ? "more than \(Int.max)" : "\(pixels)") pixels, over the limit of \(maxPixels)"
        case .needsMoreMemory(let bytes, let budget, let decodeMemory):
            return "decoding this image needs \(DecodeCost.mebibytes(bytes)) MiB, more than the "
                + "\(DecodeCost.mebibytes(budget)) MiB a large decode may hold "
                + "(decode_memory = \(DecodeCost.mebibytes(decodeMemory)) MiB)"
        case .invalidWidth:
            return "thumbnail width must be at least 1"
        case .library(let what):
            return what
        }
    }
}
