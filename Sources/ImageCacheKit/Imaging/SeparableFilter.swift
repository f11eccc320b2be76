/// The resampler's two passes, fed rows top to bottom: an optional integer box pre-shrink
/// (`BoxShrinker`), then the filter along x as each row arrives, then the filter along y once
/// the last row is in. `Resampler.resize` hands it the whole picture at once; a streamed PNG
/// hands it bands as libpng produces them. One path, so the two give the same pixels.
///
/// How the passes are laid out, and why (docs/benchmarks.md, "A filter that sums with
/// `pmaddwd`"): every output sample is a dot product of `Weights.stride` 8-bit samples with
/// 16-bit weights, summed in 32 bits, over samples that lie next to each other in memory. The
/// compiler turns that into SSE2's `pmaddwd` (eight multiply-adds in one instruction, on the
/// x86-64 baseline). Interleaved RGB read tap by tap, as the filter first did, could not be
/// vectorized, and cost 35 % of a baseline JPEG thumbnail. So each arriving row is split into
/// one plane per channel, and the x pass writes its result transposed (one column of samples
/// per output x and channel, top to bottom), so that the y pass reads contiguous samples too.
/// The arithmetic is the one the filter always did (the same weights, sums, rounding and
/// clamp), so its output is the same, byte for byte.
struct SeparableFilter {
    /// The input's row width, in pixels.
    let sourceWidth: Int
    let channels: Int
    /// The output's size.
    let width: Int
    let height: Int
    /// The picture the filter sees, after the box pre-shrink.
    let filteredWidth: Int
    let filteredHeight: Int
    private var shrinker: BoxShrinker?
    private var shrunk: [UInt8] = []
    private let across: Resampler.Weights
    private let down: Resampler.Weights
    /// One row split into channel planes, each `planeStride` samples (zero padding after the
    /// row, where the padded taps read).
    private var planes: [UInt8]
    private let planeStride: Int
    /// The x pass's output, transposed: channel `c`'s column `x` holds `filteredHeight`
    /// samples from `(c × width + x) × columnStride` (then zero padding).
    private var columns: [UInt8]
    private let columnStride: Int
    /// The next row of `columns` to fill.
    private var row = 0

    /// The bytes the filter holds for a picture of `sourceWidth × sourceHeight` shrunk to
    /// `width × height` (the box shrinker's sums, the channel planes, the transposed columns
    /// and the output), for `DecodeCost`'s budget.
    static func memory(sourceWidth: Int, sourceHeight: Int, channels: Int, width: Int, height: Int) -> Int {
        let factors = BoxShrinker.factors(sourceWidth: sourceWidth, sourceHeight: sourceHeight, width: width, height: height)
        let filteredWidth = (sourceWidth + factors.x - 1) / factors.x, filteredHeight = (sourceHeight + factors.y - 1) / factors.y
        let planes = filteredWidth.addingClamped(Resampler.Weights.lanes).multipliedClamped(by: channels)
        let columns = filteredHeight.addingClamped(Resampler.Weights.lanes).multipliedClamped(by: width).multipliedClamped(by: channels)
        let output = width.multipliedClamped(by: height).multipliedClamped(by: channels)
        let shrinker = factors == (1, 1) ? 0 : BoxShrinker.memory(sourceWidth: sourceWidth, channels: channels, factorX: factors.x)
        return planes.addingClamped(columns).addingClamped(output).addingClamped(shrinker)
    }

    init(sourceWidth: Int, sourceHeight: Int, channels: Int, width: Int, height: Int, filter: Resampler.Filter) {
        self.sourceWidth = sourceWidth
        self.channels = channels
        self.width = width
        self.height = height
        let factors = BoxShrinker.factors(sourceWidth: sourceWidth, sourceHeight: sourceHeight, width: width, height: height)
        shrinker = factors == (1, 1) ? nil
            : BoxShrinker(sourceWidth: sourceWidth, channels: channels, factorX: factors.x, factorY: factors.y)
        filteredWidth = (sourceWidth + factors.x - 1) / factors.x
        filteredHeight = (sourceHeight + factors.y - 1) / factors.y
        // An axis kept at its size passes through with one tap of weight 1: the same bytes.
        across = width == filteredWidth ? .identity(filteredWidth)
            : Resampler.weights(source: filteredWidth, target: width, filter: filter)
        down = height == filteredHeight ? .identity(filteredHeight)
            : Resampler.weights(source: filteredHeight, target: height, filter: filter)
        planeStride = filteredWidth + Resampler.Weights.lanes
        planes = [UInt8](repeating: 0, count: planeStride * channels)
        columnStride = filteredHeight + Resampler.Weights.lanes
        columns = [UInt8](repeating: 0, count: columnStride * width * channels)
    }

    /// Adds `count` source rows (`sourceWidth × channels` bytes each, one after another).
    mutating func add(rows source: UnsafePointer<UInt8>, count: Int) {
        let rowLength = sourceWidth * channels
        for index in 0..<count {
            let sourceRow = source + index * rowLength
            if shrinker == nil {
                filterAcross(sourceRow)
            } else {
                shrinker!.add(row: sourceRow, into: &shrunk)
                filterShrunkRows()
            }
        }
    }

    /// Filters down the columns once every row is in, and returns the picture.
    mutating func finish() -> PixelBuffer {
        if shrinker != nil {
            shrinker!.finish(into: &shrunk)
            filterShrunkRows()
        }
        precondition(row == filteredHeight, "SeparableFilter: \(row) rows of \(filteredHeight) were added")
        return filterDown()
    }

    private mutating func filterShrunkRows() {
        guard !shrunk.isEmpty else { return }
        let rowLength = filteredWidth * channels
        var rows: [UInt8] = []
        swap(&rows, &shrunk)  // held alone while the rows are filtered, so kept, not copied
        rows.withUnsafeBufferPointer { rows in
            for start in stride(from: 0, to: rows.count, by: rowLength) { filterAcross(rows.baseAddress! + start) }
        }
        rows.removeAll(keepingCapacity: true)
        shrunk = rows
    }

    /// Splits one row (of `filteredWidth` pixels) into planes, filters each plane along x and
    /// writes the results into row `row` of the columns.
    private mutating func filterAcross(_ source: UnsafePointer<UInt8>) {
        precondition(row < filteredHeight, "SeparableFilter: more rows than \(filteredHeight)")
        let channels = self.channels, width = self.width, filteredWidth = self.filteredWidth
        let planeStride = self.planeStride, columnStride = self.columnStride, row = self.row
        let across = self.across
        planes.withUnsafeMutableBufferPointer { planes in
            guard let planeBase = planes.baseAddress else { return }
            Self.split(source, count: filteredWidth, channels: channels, into: planeBase, planeStride: planeStride)
            columns.withUnsafeMutableBufferPointer { columns in
                across.values.withUnsafeBufferPointer { values in
                    across.starts.withUnsafeBufferPointer { starts in
                        guard let columnBase = columns.baseAddress, let valueBase = values.baseAddress else { return }
                        for channel in 0..<channels {
                            let plane = planeBase + channel * planeStride
                            let column = columnBase + channel * width * columnStride + row
                            for x in 0..<width {
                                let sum = Self.dot(plane + starts[x], valueBase + x * across.stride, stride: across.stride)
                                column[x * columnStride] = Self.clamp(sum)
                            }
                        }
                    }
                }
            }
        }
        self.row += 1
    }

    /// Filters each column along y into the output's rows.
    private func filterDown() -> PixelBuffer {
        let channels = self.channels, width = self.width, height = self.height, columnStride = self.columnStride
        let down = self.down
        var output = [UInt8](repeating: 0, count: width * height * channels)
        output.withUnsafeMutableBufferPointer { output in
            columns.withUnsafeBufferPointer { columns in
                down.values.withUnsafeBufferPointer { values in
                    down.starts.withUnsafeBufferPointer { starts in
                        guard let outputBase = output.baseAddress, let columnBase = columns.baseAddress,
                              let valueBase = values.baseAddress else { return }
                        for channel in 0..<channels {
                            for x in 0..<width {
                                let column = columnBase + (channel * width + x) * columnStride
                                var target = outputBase + x * channels + channel
                                for y in 0..<height {
                                    let sum = Self.dot(column + starts[y], valueBase + y * down.stride, stride: down.stride)
                                    target.pointee = Self.clamp(sum)
                                    target += width * channels
                                }
                            }
                        }
                    }
                }
            }
        }
        return PixelBuffer(width: width, height: height, channels: channels, pixels: output)
    }

    /// Splits `count` interleaved pixels into one plane per channel. The common layouts get
    /// a loop of their own: a generic one, with its index arithmetic per sample, cost as much
    /// as the filtering (perf, baseline JPEG at 512 px).
    @inline(__always)
    private static func split(_ source: UnsafePointer<UInt8>, count: Int, channels: Int,
                              into planes: UnsafeMutablePointer<UInt8>, planeStride: Int) {
        var pixel = source
        switch channels {
        case 1:
            planes.update(from: source, count: count)
        case 3:
            let red = planes, green = planes + planeStride, blue = planes + 2 * planeStride
            for x in 0..<count {
                red[x] = pixel[0]; green[x] = pixel[1]; blue[x] = pixel[2]
                pixel += 3
            }
        case 4:
            let red = planes, green = planes + planeStride, blue = planes + 2 * planeStride, alpha = planes + 3 * planeStride
            for x in 0..<count {
                red[x] = pixel[0]; green[x] = pixel[1]; blue[x] = pixel[2]; alpha[x] = pixel[3]
                pixel += 4
            }
        default:
            for x in 0..<count {
                for channel in 0..<channels { planes[channel &* planeStride &+ x] = pixel[channel] }
                pixel += channels
            }
        }
    }

    /// The rounded fixed-point sum of `stride` samples times their weights (`stride` is a
    /// multiple of `Weights.lanes`). Written eight at a time as one expression so that the
    /// compiler emits `pmaddwd` for each eight: the sum is the same in any order (integers).
    @inline(__always)
    private static func dot(_ samples: UnsafePointer<UInt8>, _ weights: UnsafePointer<Int16>, stride: Int) -> Int32 {
        var sum: Int32 = 1 << (Resampler.precisionBits - 1)
        var s = samples, w = weights
        for _ in 0..<(stride / Resampler.Weights.lanes) {
            sum &+= Int32(w[0]) &* Int32(s[0]) &+ Int32(w[1]) &* Int32(s[1]) &+ Int32(w[2]) &* Int32(s[2])
                &+ Int32(w[3]) &* Int32(s[3])
            sum &+= Int32(w[4]) &* Int32(s[4]) &+ Int32(w[5]) &* Int32(s[5]) &+ Int32(w[6]) &* Int32(s[6])
                &+ Int32(w[7]) &* Int32(s[7])
            s += Resampler.Weights.lanes
            w += Resampler.Weights.lanes
        }
        return sum
    }

    @inline(__always)
    private static func clamp(_ sum: Int32) -> UInt8 {
        let value = sum >> Resampler.precisionBits
        return UInt8(truncatingIfNeeded: value < 0 ? 0 : (value > 255 ? 255 : value))
    }
}
