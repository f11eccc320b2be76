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
/// Both passes compute four outputs at once with one set of weights (`dots`), reduce their
/// sums together and write four adjacent bytes: the x pass takes the rows eight at a time
/// (`group`), so its outputs are rows of one column, and the y pass takes four adjacent
/// samples of an output row. Done one output at a time, the reduction of each sum
/// and the byte written per row into another cache line cost more than the multiplications
/// (docs/benchmarks.md, "Four outputs per set of weights").
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
    /// Up to `group` rows split into channel planes: channel `c` of the group's row `r` at
    /// `(c × group + r) × planeStride`, each plane zero-padded after the row, where the padded
    /// taps read.
    private var planes: [UInt8]
    private let planeStride: Int
    /// Rows split into `planes` and not yet filtered.
    private var pending = 0
    /// Rows the x pass filters together: eight, as two sets of four (`dots`), so that each
    /// column's cache line is written eight bytes at a time. With four, the scattered
    /// four-byte stores into the transposed columns (one line per output x and channel, more
    /// lines than L1 holds) were half of the x pass's time (perf annotate, JPEG at 256 px).
    static let group = 8
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
        let planes = filteredWidth.addingClamped(Resampler.Weights.lanes).multipliedClamped(by: channels * group)
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
            : Resampler.recentWeights.weights(source: filteredWidth, target: width, filter: filter)
        down = height == filteredHeight ? .identity(filteredHeight)
            : Resampler.recentWeights.weights(source: filteredHeight, target: height, filter: filter)
        planeStride = filteredWidth + Resampler.Weights.lanes
        planes = [UInt8](repeating: 0, count: planeStride * channels * Self.group)
        columnStride = filteredHeight + Resampler.Weights.lanes
        columns = [UInt8](repeating: 0, count: columnStride * width * channels)
    }

    /// Adds `count` source rows (`sourceWidth × channels` bytes each, one after another).
    mutating func add(rows source: UnsafePointer<UInt8>, count: Int) {
        let rowLength = sourceWidth * channels
        for index in 0..<count {
            let sourceRow = source + index * rowLength
            if shrinker == nil {
                take(sourceRow)
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
        if pending > 0 { filterAcross() }
        precondition(row == filteredHeight, "SeparableFilter: \(row) rows of \(filteredHeight) were added")
        return filterDown()
    }

    private mutating func filterShrunkRows() {
        guard !shrunk.isEmpty else { return }
        let rowLength = filteredWidth * channels
        var rows: [UInt8] = []
        swap(&rows, &shrunk)  // held alone while the rows are filtered, so kept, not copied
        rows.withUnsafeBufferPointer { rows in
            for start in stride(from: 0, to: rows.count, by: rowLength) { take(rows.baseAddress! + start) }
        }
        rows.removeAll(keepingCapacity: true)
        shrunk = rows
    }

    /// Splits one row (of `filteredWidth` pixels) into the group's planes; filters the group
    /// along x once it is full.
    private mutating func take(_ source: UnsafePointer<UInt8>) {
        precondition(row + pending < filteredHeight, "SeparableFilter: more rows than \(filteredHeight)")
        let channels = self.channels, filteredWidth = self.filteredWidth, planeStride = self.planeStride
        let slot = pending
        planes.withUnsafeMutableBufferPointer { planes in
            guard let planeBase = planes.baseAddress else { return }
            Self.split(source, count: filteredWidth, channels: channels, into: planeBase + slot * planeStride,
                       planeStride: planeStride * Self.group)
        }
        pending += 1
        if pending == Self.group { filterAcross() }
    }

    /// Filters the `pending` rows of the planes along x into rows `row...` of the columns.
    private mutating func filterAcross() {
        let channels = self.channels, width = self.width, count = pending
        let planeStride = self.planeStride, columnStride = self.columnStride, row = self.row
        let across = self.across, stride = across.stride
        planes.withUnsafeBufferPointer { planes in
            columns.withUnsafeMutableBufferPointer { columns in
                across.values.withUnsafeBufferPointer { values in
                    across.starts.withUnsafeBufferPointer { starts in
                        guard let planeBase = planes.baseAddress, let columnBase = columns.baseAddress,
                              let valueBase = values.baseAddress else { return }
                        for channel in 0..<channels {
                            let plane = planeBase + channel * Self.group * planeStride
                            var target = columnBase + channel * width * columnStride + row
                            var weights = valueBase
                            for x in 0..<width {
                                let source = plane + starts[x]
                                if count == Self.group {
                                    let upper = Self.dots(source, source + planeStride, source + 2 * planeStride,
                                                          source + 3 * planeStride, weights, stride: stride)
                                    let lower = source + 4 * planeStride
                                    let sums = Self.dots(lower, lower + planeStride, lower + 2 * planeStride,
                                                         lower + 3 * planeStride, weights, stride: stride)
                                    UnsafeMutableRawPointer(target).storeBytes(
                                        of: SIMD8(lowHalf: Self.clamp(upper), highHalf: Self.clamp(sums)), as: SIMD8<UInt8>.self)
                                } else {
                                    for index in 0..<count {
                                        target[index] = Self.clamp(Self.dot(source + index * planeStride, weights, stride: stride))
                                    }
                                }
                                target += columnStride
                                weights += stride
                            }
                        }
                    }
                }
            }
        }
        self.row += count
        pending = 0
    }

    /// Filters each column along y into the output's rows. Four adjacent samples of an output
    /// row (from four columns) are filtered together, as the x pass does four rows: one
    /// weight vector for four dot products, four bytes written at once.
    private func filterDown() -> PixelBuffer {
        let channels = self.channels, width = self.width, height = self.height, columnStride = self.columnStride
        let rowLength = width * channels
        let down = self.down, stride = down.stride
        var output = [UInt8](repeating: 0, count: rowLength * height)
        output.withUnsafeMutableBufferPointer { output in
            columns.withUnsafeBufferPointer { columns in
                down.values.withUnsafeBufferPointer { values in
                    down.starts.withUnsafeBufferPointer { starts in
                        guard let outputBase = output.baseAddress, let columnBase = columns.baseAddress,
                              let valueBase = values.baseAddress else { return }
                        // The column of a row's sample `i`: pixel i / channels, channel i % channels.
                        func column(_ i: Int) -> UnsafePointer<UInt8> {
                            columnBase + ((i % channels) * width + i / channels) * columnStride
                        }
                        var i = 0
                        while i + 4 <= rowLength {
                            let first = column(i), second = column(i + 1), third = column(i + 2), fourth = column(i + 3)
                            var target = outputBase + i, weights = valueBase
                            for y in 0..<height {
                                let start = starts[y]
                                let sums = Self.dots(first + start, second + start, third + start, fourth + start,
                                                     weights, stride: stride)
                                UnsafeMutableRawPointer(target).storeBytes(of: Self.clamp(sums), as: SIMD4<UInt8>.self)
                                target += rowLength
                                weights += stride
                            }
                            i += 4
                        }
                        for i in i..<rowLength {
                            let source = column(i)
                            for y in 0..<height {
                                outputBase[y * rowLength + i] = Self.clamp(Self.dot(source + starts[y], valueBase + y * stride, stride: stride))
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
            // Sixteen pixels at a time: three vector loads, each plane's bytes gathered by
            // constant index (SSE2 shuffles and masks, ≈ 8 instructions a pixel, where the
            // loop below spends three loads and three stores).
            var x = 0
            let raw = UnsafeRawPointer(source)
            while x + 16 <= count {
                let a = raw.loadUnaligned(fromByteOffset: x * 3, as: SIMD16<UInt8>.self)
                let b = raw.loadUnaligned(fromByteOffset: x * 3 + 16, as: SIMD16<UInt8>.self)
                let c = raw.loadUnaligned(fromByteOffset: x * 3 + 32, as: SIMD16<UInt8>.self)
                UnsafeMutableRawPointer(red + x).storeBytes(
                    of: SIMD16(a[0], a[3], a[6], a[9], a[12], a[15], b[2], b[5], b[8], b[11], b[14], c[1], c[4], c[7], c[10], c[13]),
                    as: SIMD16<UInt8>.self)
                UnsafeMutableRawPointer(green + x).storeBytes(
                    of: SIMD16(a[1], a[4], a[7], a[10], a[13], b[0], b[3], b[6], b[9], b[12], b[15], c[2], c[5], c[8], c[11], c[14]),
                    as: SIMD16<UInt8>.self)
                UnsafeMutableRawPointer(blue + x).storeBytes(
                    of: SIMD16(a[2], a[5], a[8], a[11], a[14], b[1], b[4], b[7], b[10], b[13], c[0], c[3], c[6], c[9], c[12], c[15]),
                    as: SIMD16<UInt8>.self)
                x += 16
            }
            pixel += x * 3
            for x in x..<count {
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

    /// Four dot products with one set of weights: lane `i` of the result is the sum of
    /// `stride` samples from the `i`th pointer times `weights` (`stride` is a multiple of
    /// `Weights.lanes`). Each eight samples, widened, are multiplied by their weights and added
    /// in pairs into four 32-bit lanes per product, which the compiler emits as one `pmaddwd`;
    /// the four products' lanes are reduced together at the end (reduced per eight, or per
    /// product, the reduction cost as much as the multiplications). Integers: the sums are the
    /// same in any order. The only kernel: a lone dot product passes one pointer four times.
    @inline(__always)
    private static func dots(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ c: UnsafePointer<UInt8>,
                             _ d: UnsafePointer<UInt8>, _ weights: UnsafePointer<Int16>, stride: Int) -> SIMD4<Int32> {
        @inline(__always)
        func pairs(_ samples: UnsafePointer<UInt8>, _ offset: Int, _ weight: SIMD8<Int32>) -> SIMD4<Int32> {
            let products = SIMD8<Int32>(truncatingIfNeeded: UnsafeRawPointer(samples + offset).loadUnaligned(as: SIMD8<UInt8>.self)) &* weight
            return products.evenHalf &+ products.oddHalf
        }
        var laneA = SIMD4<Int32>(repeating: 0), laneB = laneA, laneC = laneA, laneD = laneA
        var offset = 0
        while offset < stride {
            let weight = SIMD8<Int32>(truncatingIfNeeded: UnsafeRawPointer(weights + offset).loadUnaligned(as: SIMD8<Int16>.self))
            laneA &+= pairs(a, offset, weight)
            laneB &+= pairs(b, offset, weight)
            laneC &+= pairs(c, offset, weight)
            laneD &+= pairs(d, offset, weight)
            offset += Resampler.Weights.lanes
        }
        // Two rounds of pairwise adds: lane i of the result sums the ith product's lanes.
        let ab = SIMD4(lowHalf: laneA.evenHalf &+ laneA.oddHalf, highHalf: laneB.evenHalf &+ laneB.oddHalf)
        let cd = SIMD4(lowHalf: laneC.evenHalf &+ laneC.oddHalf, highHalf: laneD.evenHalf &+ laneD.oddHalf)
        return SIMD4(lowHalf: ab.evenHalf &+ ab.oddHalf, highHalf: cd.evenHalf &+ cd.oddHalf)
    }

    /// One dot product (`dots` of one pointer).
    @inline(__always)
    private static func dot(_ samples: UnsafePointer<UInt8>, _ weights: UnsafePointer<Int16>, stride: Int) -> Int32 {
        dots(samples, samples, samples, samples, weights, stride: stride)[0]
    }

    /// A sum back to a sample: rounded to the nearest (half up), then clamped to 0...255.
    @inline(__always)
    private static func clamp(_ sum: Int32) -> UInt8 {
        let value = (sum &+ 1 << (Resampler.precisionBits - 1)) >> Resampler.precisionBits
        return UInt8(truncatingIfNeeded: value < 0 ? 0 : (value > 255 ? 255 : value))
    }

    /// Four sums back to samples, as `clamp(_:)` does one, with lane masks: `init(clamping:)`
    /// compiled to a compare and two branches per lane, a third of the x pass's time (perf
    /// annotate, baseline JPEG at 256 px).
    @inline(__always)
    private static func clamp(_ sums: SIMD4<Int32>) -> SIMD4<UInt8> {
        let values = (sums &+ 1 << (Resampler.precisionBits - 1)) &>> Int32(Resampler.precisionBits)
        let low = values.replacing(with: 0, where: values .< 0)
        return SIMD4<UInt8>(truncatingIfNeeded: low.replacing(with: 255, where: low .> 255))
    }
}
