/// An integer box pre-shrink in front of the resampler's filter: rows go in one by one, each
/// `factorX` columns and `factorY` rows are averaged into one pixel (the last box of a row or
/// column takes what is left), and the shrunk rows come out.
///
/// Why: a 2400-px PNG shrunk to 256 px went whole through the Lanczos-3 filter at a scale of
/// 9.4, 57 taps per output sample; Pillow's `thumbnail()` box-reduces by an integer factor
/// first and filters only the rest, and cost 0.8 × the CPU (docs/benchmarks.md, "CPU per
/// thumbnail"). The factors are chosen so that the shrunk picture stays at least three times
/// the target (`margin`), beyond the quality rule's 2 ×. `Resampler.resize` and its streaming form both go through this one type, so the
/// two still give the same pixels.
struct BoxShrinker {
    let sourceWidth: Int
    let channels: Int
    let factorX: Int
    let factorY: Int
    /// The shrunk row's width: `sourceWidth / factorX`, rounded up.
    let width: Int
    /// 64-bit: a box of a huge picture shrunk to a few pixels holds more than 2^32 / 255 samples.
    private var sums: [UInt64]
    private var rowsInBox = 0

    /// How many times the target the shrunk picture stays at least: 3, not 2. At 2 the PNG
    /// thumbnails' mean SSIM fell 0.0001 below vipsthumbnail's (from above it); the filter
    /// needs that much more of the picture to match a whole-picture Lanczos.
    static let margin = 3

    /// The factors for shrinking `source` toward `target` on each axis: the largest integers
    /// that keep the result at least `margin` times the target (1 when there is no room).
    static func factors(sourceWidth: Int, sourceHeight: Int, width: Int, height: Int) -> (x: Int, y: Int) {
        (max(1, sourceWidth / max(1, margin * width)), max(1, sourceHeight / max(1, margin * height)))
    }

    init(sourceWidth: Int, channels: Int, factorX: Int, factorY: Int) {
        self.sourceWidth = sourceWidth
        self.channels = channels
        self.factorX = max(1, factorX)
        self.factorY = max(1, factorY)
        width = (sourceWidth + self.factorX - 1) / self.factorX
        sums = [UInt64](repeating: 0, count: width * channels)
    }

    /// Adds one source row (`sourceWidth × channels` bytes at `row`); when it completes a box
    /// of rows, appends the shrunk row to `output`.
    mutating func add(row: UnsafePointer<UInt8>, into output: inout [UInt8]) {
        let channels = self.channels, factorX = self.factorX, sourceWidth = self.sourceWidth
        sums.withUnsafeMutableBufferPointer { sums in
            var x = 0, box = 0
            while x < sourceWidth {
                let end = min(x + factorX, sourceWidth)
                let base = box * channels
                for column in x..<end {
                    let pixel = row + column * channels
                    for channel in 0..<channels { sums[base + channel] &+= UInt64(pixel[channel]) }
                }
                x = end
                box += 1
            }
        }
        rowsInBox += 1
        if rowsInBox == factorY { flush(into: &output) }
    }

    /// Emits the rows added since the last shrunk row (the bottom box, shorter than
    /// `factorY`), if any.
    mutating func finish(into output: inout [UInt8]) {
        if rowsInBox > 0 { flush(into: &output) }
    }

    private mutating func flush(into output: inout [UInt8]) {
        let rows = UInt64(rowsInBox), channels = self.channels, factorX = self.factorX, sourceWidth = self.sourceWidth
        sums.withUnsafeMutableBufferPointer { sums in
            for box in 0..<width {
                let columns = UInt64(min(factorX, sourceWidth - box * factorX))
                let count = columns * rows
                for channel in 0..<channels {
                    let index = box * channels + channel
                    output.append(UInt8(truncatingIfNeeded: (sums[index] + count / 2) / count))
                    sums[index] = 0
                }
            }
        }
        rowsInBox = 0
    }
}
