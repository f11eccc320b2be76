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
    /// Each box's sum, per channel. 64-bit: a box of a huge picture shrunk to a few pixels
    /// holds more than 2^32 / 255 samples.
    private var sums: [UInt64]
    /// Each source sample's sum over the rows added since the last `fold`. Rows are added
    /// here, sample by sample, in a loop the compiler vectorizes; the boxes' horizontal sums
    /// are taken once per box of rows (`fold`). Adding each sample to its box directly cost
    /// 2 ns a sample, 18 % of a PNG thumbnail's CPU (docs/benchmarks.md).
    private var columnSums: [UInt32]
    /// Rows in `columnSums`, folded every `foldInterval` rows at most.
    private var rowsInColumns = 0
    /// At most 2^24 rows are summed in 32 bits (255 × 2^24 < 2^32); tests fold sooner, to see
    /// that folding in the middle of a box changes nothing.
    private let foldInterval: Int
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

    /// The bytes a shrinker holds (column sums, box sums, one shrunk row), for `DecodeCost`.
    static func memory(sourceWidth: Int, channels: Int, factorX: Int) -> Int {
        let boxes = (sourceWidth / max(1, factorX)).addingClamped(1).multipliedClamped(by: channels)
        return sourceWidth.multipliedClamped(by: channels).multipliedClamped(by: 4)
            .addingClamped(boxes.multipliedClamped(by: 9))
    }

    init(sourceWidth: Int, channels: Int, factorX: Int, factorY: Int, foldInterval: Int = 1 << 24) {
        self.foldInterval = min(max(1, foldInterval), 1 << 24)
        self.sourceWidth = sourceWidth
        self.channels = channels
        self.factorX = max(1, factorX)
        self.factorY = max(1, factorY)
        width = (sourceWidth + self.factorX - 1) / self.factorX
        sums = [UInt64](repeating: 0, count: width * channels)
        columnSums = [UInt32](repeating: 0, count: sourceWidth * channels)
    }

    /// Adds one source row (`sourceWidth × channels` bytes at `row`); when it completes a box
    /// of rows, appends the shrunk row to `output`.
    mutating func add(row: UnsafePointer<UInt8>, into output: inout [UInt8]) {
        columnSums.withUnsafeMutableBufferPointer { columns in
            for index in columns.indices { columns[index] &+= UInt32(row[index]) }
        }
        rowsInColumns += 1
        rowsInBox += 1
        if rowsInBox == factorY {
            flush(into: &output)
        } else if rowsInColumns == foldInterval {
            fold()
        }
    }

    /// Emits the rows added since the last shrunk row (the bottom box, shorter than
    /// `factorY`), if any.
    mutating func finish(into output: inout [UInt8]) {
        if rowsInBox > 0 { flush(into: &output) }
    }

    /// Moves the column sums into their boxes' sums and clears them. The common layouts get
    /// a loop of their own, with no index arithmetic per sample.
    private mutating func fold() {
        let channels = self.channels, factorX = self.factorX, sourceWidth = self.sourceWidth, width = self.width
        sums.withUnsafeMutableBufferPointer { sums in
            columnSums.withUnsafeMutableBufferPointer { columns in
                guard let sumBase = sums.baseAddress, let columnBase = columns.baseAddress else { return }
                var column = UnsafePointer(columnBase)
                for box in 0..<width {
                    let count = min(factorX, sourceWidth &- box &* factorX)
                    let target = sumBase + box &* channels
                    switch channels {
                    case 3:
                        var red: UInt64 = 0, green: UInt64 = 0, blue: UInt64 = 0
                        for _ in 0..<count {
                            red &+= UInt64(column[0]); green &+= UInt64(column[1]); blue &+= UInt64(column[2])
                            column += 3
                        }
                        target[0] &+= red; target[1] &+= green; target[2] &+= blue
                    case 4:
                        var red: UInt64 = 0, green: UInt64 = 0, blue: UInt64 = 0, alpha: UInt64 = 0
                        for _ in 0..<count {
                            red &+= UInt64(column[0]); green &+= UInt64(column[1]); blue &+= UInt64(column[2])
                            alpha &+= UInt64(column[3])
                            column += 4
                        }
                        target[0] &+= red; target[1] &+= green; target[2] &+= blue; target[3] &+= alpha
                    default:
                        for channel in 0..<channels {
                            var total: UInt64 = 0
                            for index in 0..<count { total &+= UInt64(column[index &* channels &+ channel]) }
                            target[channel] &+= total
                        }
                        column += count &* channels
                    }
                }
                columnBase.update(repeating: 0, count: columns.count)
            }
        }
        rowsInColumns = 0
    }

    private mutating func flush(into output: inout [UInt8]) {
        fold()
        let rows = UInt64(rowsInBox), channels = self.channels, factorX = self.factorX
        // Every box but the last of the row may be full and share one divisor (finding its
        // reciprocal is itself a division); the samples are written in place, not appended
        // one by one (the appends were as costly as the means).
        let fullBoxes = sourceWidth / factorX
        let full = RoundedMean(count: UInt64(factorX) * rows)
        let last = RoundedMean(count: UInt64(sourceWidth - fullBoxes * factorX) * rows)
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: width * channels))
        output.withUnsafeMutableBufferPointer { output in
            sums.withUnsafeMutableBufferPointer { sums in
                guard let target = output.baseAddress.map({ $0 + start }), let sums = sums.baseAddress else { return }
                let fullSamples = fullBoxes * channels
                for index in 0..<fullSamples { target[index] = UInt8(truncatingIfNeeded: full(sums[index])) }
                for index in fullSamples..<(width * channels) { target[index] = UInt8(truncatingIfNeeded: last(sums[index])) }
                sums.update(repeating: 0, count: width * channels)
            }
        }
        rowsInBox = 0
    }
}

/// `(sum + count / 2) / count`, the rounded mean of a box of `count` samples whose `sum` is
/// at most 255 × `count`, by a multiplication: each box's divisor is known before its sums,
/// and the 64-bit division per output sample was 18 % of the box shrinker's time (perf, PNG
/// at 256 px). The reciprocal `m = ⌊(2⁶⁴ − 1) / count⌋ + 1` exceeds 2⁶⁴ / count by less than
/// one, so `⌊n × m / 2⁶⁴⌋` is `⌊n / count⌋` while `n × count < 2⁶⁴`: for every `n` here
/// (under 256 × `count`) when `count < 2²⁸`. A larger box (a picture of over 2²⁸ pixels
/// shrunk to one) divides.
struct RoundedMean {
    let count: UInt64
    private let reciprocal: UInt64

    init(count: UInt64) {
        self.count = max(1, count)
        reciprocal = self.count < 2 || self.count >= 1 << 28 ? 0 : UInt64.max / self.count + 1
    }

    @inline(__always)
    func callAsFunction(_ sum: UInt64) -> UInt64 {
        let rounded = sum + count / 2
        return reciprocal == 0 ? rounded / count : rounded.multipliedFullWidth(by: reciprocal).high
    }
}
