/// Decoded 8-bit pixels, rows top to bottom, channels interleaved with no row padding.
///
/// One layout for every stage (decode → resample → orient → encode) keeps each stage a
/// simple loop. Channels: 1 = grey, 3 = RGB, 4 = RGBA (straight, not premultiplied).
struct PixelBuffer: Sendable {
    var width: Int
    var height: Int
    var channels: Int
    var pixels: [UInt8]

    init(width: Int, height: Int, channels: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * channels, "pixel count does not match the geometry")
        self.width = width
        self.height = height
        self.channels = channels
        self.pixels = pixels
    }

    /// Whether any pixel is less than fully opaque (only RGBA can be).
    var hasTranslucentPixels: Bool {
        guard channels == 4 else { return false }
        return pixels.withUnsafeBufferPointer { buffer in
            var index = 3
            while index < buffer.count {
                if buffer[index] != 255 { return true }
                index += 4
            }
            return false
        }
    }
}
