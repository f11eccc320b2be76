import ImageCacheProtocol

/// The two error kinds Imaging throws, built in one place so every message names the format
/// (contract §3: `decode_failed` carries `data.format` when the format was sniffed).
enum ImagingError {
    /// Bytes that are not a decodable image of `format` (nil when not even the format is known).
    static func decodeFailed(_ message: String, format: ImageFormat?) -> RPCError {
        RPCError(.decodeFailed, message, format: format?.rawValue)
    }

    /// An image whose declared pixel count exceeds the configured limit.
    static func tooLarge(width: Int, height: Int, maxPixels: Int) -> RPCError {
        RPCError(.tooLarge, "image is \(width)×\(height) = \(width * height) pixels, over the limit of \(maxPixels)")
    }
}
