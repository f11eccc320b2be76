extension PixelBuffer {
    /// The pixels turned upright per the EXIF orientation, so a thumbnail's file matches the
    /// width and height the daemon reports and displays right in viewers that ignore EXIF
    /// (the re-encoded output carries no EXIF at all).
    func oriented(_ orientation: ExifOrientation) -> PixelBuffer {
        if orientation == .up { return self }
        let (w, h, channels) = (width, height, self.channels)
        let outWidth = orientation.swapsDimensions ? h : w
        let outHeight = orientation.swapsDimensions ? w : h
        // Source (column, row) of the output pixel (x, y).
        let sourceOf: (Int, Int) -> (Int, Int)
        switch orientation {
        case .up: sourceOf = { x, y in (x, y) }
        case .upMirrored: sourceOf = { x, y in (w - 1 - x, y) }
        case .down: sourceOf = { x, y in (w - 1 - x, h - 1 - y) }
        case .downMirrored: sourceOf = { x, y in (x, h - 1 - y) }
        case .leftMirrored: sourceOf = { x, y in (y, x) }
        case .right: sourceOf = { x, y in (y, h - 1 - x) }
        case .rightMirrored: sourceOf = { x, y in (w - 1 - y, h - 1 - x) }
        case .left: sourceOf = { x, y in (w - 1 - y, x) }
        }
        var output = [UInt8](repeating: 0, count: pixels.count)
        pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                for y in 0..<outHeight {
                    for x in 0..<outWidth {
                        let (sx, sy) = sourceOf(x, y)
                        let from = (sy * w + sx) * channels, to = (y * outWidth + x) * channels
                        for channel in 0..<channels { target[to + channel] = source[from + channel] }
                    }
                }
            }
        }
        return PixelBuffer(width: outWidth, height: outHeight, channels: channels, pixels: output)
    }
}
