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

    /// The RGB of an RGBA picture (alpha dropped); used when a decoder had to produce RGBA
    /// but no pixel is translucent, so the thumbnail stays a JPEG.
    func droppingAlpha() -> PixelBuffer {
        guard channels == 4 else { return self }
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        pixels.withUnsafeBufferPointer { source in
            rgb.withUnsafeMutableBufferPointer { target in
                var from = 0, to = 0
                while to < target.count {
                    target[to] = source[from]; target[to + 1] = source[from + 1]; target[to + 2] = source[from + 2]
                    from += 4; to += 3
                }
            }
        }
        return PixelBuffer(width: width, height: height, channels: 3, pixels: rgb)
    }
}

extension PixelBuffer {
    /// The top-left `width` × `height` of the picture (a decoder's padding dropped).
    func cropped(width: Int, height: Int) -> PixelBuffer {
        precondition(width <= self.width && height <= self.height, "a crop is inside the picture")
        if width == self.width && height == self.height { return self }
        let rowLength = width * channels, sourceRowLength = self.width * channels
        var cropped = [UInt8]()
        cropped.reserveCapacity(rowLength * height)
        pixels.withUnsafeBufferPointer { source in
            for row in 0..<height {
                cropped.append(contentsOf: source[(row * sourceRowLength)..<(row * sourceRowLength + rowLength)])
            }
        }
        return PixelBuffer(width: width, height: height, channels: channels, pixels: cropped)
    }
}
