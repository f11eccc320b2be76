import Foundation

/// Shrinks pixels to an exact size with a separable, antialiased filter.
///
/// After the DCT scaling the picture is two to four times the target (`JPEGDecoder.thumbnailScale`
/// keeps that margin), so a filter whose support widens with the scale (as Pillow's and
/// libvips' do) averages every source pixel into the result: no aliasing, no skipped rows.
/// Weights are fixed-point and computed once per axis; each pass is a plain multiply-add loop
/// over 8-bit samples.
enum Resampler {
    /// The filter kernel, widened with the scale as Pillow's and libvips' are. `lanczos3` is
    /// the default: from a decode at ≥ 2 × the target it measured closest to a full-decode
    /// reference, as sharp as libvips' (docs/benchmarks.md, "Thumbnail quality (issue 24)");
    /// `cubic` (Catmull–Rom) was the default while decodes only just covered the target.
    enum Filter: Sendable {
        case box
        case triangle
        case cubic
        case lanczos3

        var support: Double {
            switch self {
            case .box: return 0.5
            case .triangle: return 1
            case .cubic: return 2
            case .lanczos3: return 3
            }
        }

        func weight(_ x: Double) -> Double {
            let x = abs(x)
            switch self {
            case .box:
                return x < 0.5 ? 1 : 0
            case .triangle:
                return x < 1 ? 1 - x : 0
            case .cubic: // Keys, a = -0.5 (Catmull–Rom)
                let a = -0.5
                if x < 1 { return ((a + 2) * x - (a + 3)) * x * x + 1 }
                if x < 2 { return (((x - 5) * x + 8) * x - 4) * a }
                return 0
            case .lanczos3: // sinc(x) · sinc(x / 3) on (−3, 3)
                if x < 1e-9 { return 1 }
                if x >= 3 { return 0 }
                let px = Double.pi * x
                return 3 * sin(px) * sin(px / 3) / (px * px)
            }
        }
    }

    /// Fixed-point precision of the weights.
    private static let precisionBits = 14

    /// Per output index: the first source index and its fixed-point weights (padded to `taps`).
    struct Weights {
        var starts: [Int]
        var taps: Int
        var values: [Int32]
    }

    static func weights(source: Int, target: Int, filter: Filter) -> Weights {
        let scale = Double(source) / Double(target)
        let filterScale = max(scale, 1)
        let support = filter.support * filterScale
        // Every window is read as `taps` samples from `starts[i]`, kept inside the source.
        let taps = min(source, Int((support * 2).rounded(.up)) + 1)
        var starts = [Int](repeating: 0, count: target)
        var values = [Int32](repeating: 0, count: target * taps)
        var raw = [Double](repeating: 0, count: taps)
        for index in 0..<target {
            let center = (Double(index) + 0.5) * scale
            var first = max(0, Int((center - support).rounded(.down)))
            let last = min(source, Int((center + support).rounded(.up)), first + taps)
            var total = 0.0
            var count = 0
            for sourceIndex in first..<last {
                let weight = filter.weight((Double(sourceIndex) + 0.5 - center) / filterScale)
                raw[count] = weight
                total += weight
                count += 1
            }
            if total == 0 {
                // A window that caught no weight (a box on a tiny target): take the nearest pixel.
                first = min(source - 1, Int(center))
                raw[0] = 1
                total = 1
                count = 1
            }
            let start = min(first, source - taps)
            starts[index] = start
            let offset = index * taps + (first - start)
            // Normalise; the rounding remainder goes to the largest weight so each window sums exactly.
            var sum: Int32 = 0
            var largest = offset
            for tap in 0..<count {
                let value = Int32((raw[tap] / total * Double(1 << precisionBits)).rounded())
                values[offset + tap] = value
                sum += value
                if value > values[largest] { largest = offset + tap }
            }
            values[largest] += Int32(1 << precisionBits) - sum
        }
        return Weights(starts: starts, taps: taps, values: values)
    }

    /// Resizes `image` to exactly `width`×`height` (each no larger than the source's).
    ///
    /// RGBA is filtered premultiplied, so the undefined colour of fully transparent pixels
    /// never bleeds into the visible edge next to them.
    ///
    /// A picture more than twice the target on an axis is first box-shrunk by an integer
    /// factor to at least twice the target (`BoxShrinker`), then filtered.
    static func resize(_ image: PixelBuffer, width: Int, height: Int, filter: Filter = .lanczos3) -> PixelBuffer {
        if width == image.width && height == image.height { return image }
        var result = image.channels == 4 ? premultiplied(image) : image
        let factors = BoxShrinker.factors(sourceWidth: image.width, sourceHeight: image.height, width: width, height: height)
        if factors != (1, 1) {
            var shrinker = BoxShrinker(sourceWidth: result.width, channels: result.channels, factorX: factors.x, factorY: factors.y)
            var shrunk: [UInt8] = []
            shrunk.reserveCapacity(shrinker.width * ((result.height + factors.y - 1) / factors.y) * result.channels)
            result.pixels.withUnsafeBufferPointer { pixels in
                guard let base = pixels.baseAddress else { return }
                for y in 0..<result.height { shrinker.add(row: base + y * result.width * result.channels, into: &shrunk) }
            }
            shrinker.finish(into: &shrunk)
            result = PixelBuffer(width: shrinker.width, height: shrunk.count / (shrinker.width * result.channels),
                                 channels: result.channels, pixels: shrunk)
        }
        if width != result.width { result = horizontal(result, width: width, filter: filter) }
        if height != result.height { result = vertical(result, height: height, filter: filter) }
        return image.channels == 4 ? unpremultiplied(result) : result
    }

    /// Resizes an image that arrives in bands of rows, top to bottom, to exactly
    /// `width`×`height`: each band is narrowed as it comes, so only `width`-wide rows are kept
    /// (a 7000-px-wide PNG shrunk to 400 holds 400-px rows, not a full-size buffer). The result
    /// is the same, pixel for pixel, as `resize` of the whole image.
    ///
    /// - Parameter readBand: fills its buffer with the next `rows` rows of the source
    ///   (`sourceWidth × channels` bytes each) and throws when they cannot be read.
    static func resize<E: Error>(streaming sourceWidth: Int, _ sourceHeight: Int, channels: Int, width: Int, height: Int,
                                 filter: Filter = .lanczos3,
                                 readBand: (inout [UInt8], _ rows: Int) throws(E) -> Void) throws(E) -> PixelBuffer {
        let bandRows = PNGDecoder.bandRows
        let rowLength = sourceWidth * channels
        // As `resize`: first an integer box pre-shrink when there is room for one.
        let factors = BoxShrinker.factors(sourceWidth: sourceWidth, sourceHeight: sourceHeight, width: width, height: height)
        var shrinker = factors == (1, 1) ? nil
            : BoxShrinker(sourceWidth: sourceWidth, channels: channels, factorX: factors.x, factorY: factors.y)
        let filteredWidth = shrinker?.width ?? sourceWidth
        let weights = width == filteredWidth ? nil : Self.weights(source: filteredWidth, target: width, filter: filter)
        // As `resize`: an image kept at its size is not filtered, so not premultiplied either.
        let premultiply = channels == 4 && (width != sourceWidth || height != sourceHeight)
        var narrowed: [UInt8] = []
        narrowed.reserveCapacity(width * ((sourceHeight + factors.y - 1) / factors.y) * channels)
        var band = [UInt8](repeating: 0, count: bandRows * rowLength)
        var shrunk: [UInt8] = []
        var y = 0
        while y < sourceHeight {
            let rows = min(bandRows, sourceHeight - y)
            try readBand(&band, rows)
            var piece = PixelBuffer(width: sourceWidth, height: rows, channels: channels,
                                    pixels: rows == bandRows ? band : Array(band.prefix(rows * rowLength)))
            if premultiply { piece = premultiplied(piece) }
            y += rows
            if shrinker != nil {
                piece.pixels.withUnsafeBufferPointer { pixels in
                    guard let base = pixels.baseAddress else { return }
                    for row in 0..<rows { shrinker!.add(row: base + row * rowLength, into: &shrunk) }
                }
                if y == sourceHeight { shrinker!.finish(into: &shrunk) }
                guard !shrunk.isEmpty else { continue }
                piece = PixelBuffer(width: filteredWidth, height: shrunk.count / (filteredWidth * channels),
                                    channels: channels, pixels: shrunk)
                shrunk.removeAll(keepingCapacity: true)
            }
            if let weights { piece = horizontal(piece, width: width, weights: weights) }
            narrowed += piece.pixels
        }
        let filteredHeight = narrowed.count / (width * channels)
        var result = PixelBuffer(width: width, height: filteredHeight, channels: channels, pixels: narrowed)
        if height != filteredHeight { result = vertical(result, height: height, filter: filter) }
        return premultiply ? unpremultiplied(result) : result
    }

    static func premultiplied(_ image: PixelBuffer) -> PixelBuffer {
        var result = image
        result.pixels.withUnsafeMutableBufferPointer { pixels in
            for index in stride(from: 0, to: pixels.count, by: 4) {
                let alpha = UInt32(pixels[index + 3])
                for channel in 0..<3 {
                    pixels[index + channel] = UInt8((UInt32(pixels[index + channel]) * alpha + 127) / 255)
                }
            }
        }
        return result
    }

    static func unpremultiplied(_ image: PixelBuffer) -> PixelBuffer {
        var result = image
        result.pixels.withUnsafeMutableBufferPointer { pixels in
            for index in stride(from: 0, to: pixels.count, by: 4) {
                let alpha = UInt32(pixels[index + 3])
                for channel in 0..<3 {
                    pixels[index + channel] = alpha == 0 ? 0
                        : UInt8(min(255, (UInt32(pixels[index + channel]) * 255 + alpha / 2) / alpha))
                }
            }
        }
        return result
    }

    private static func horizontal(_ image: PixelBuffer, width: Int, filter: Filter) -> PixelBuffer {
        horizontal(image, width: width, weights: Self.weights(source: image.width, target: width, filter: filter))
    }

    private static func horizontal(_ image: PixelBuffer, width: Int, weights: Weights) -> PixelBuffer {
        let channels = image.channels, taps = weights.taps
        let half: Int32 = 1 << (precisionBits - 1)
        var output = [UInt8](repeating: 0, count: width * image.height * channels)
        image.pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                weights.values.withUnsafeBufferPointer { values in
                    weights.starts.withUnsafeBufferPointer { starts in
                        guard let sourceBase = source.baseAddress, let targetBase = target.baseAddress,
                              let valueBase = values.baseAddress else { return }
                        for y in 0..<image.height {
                            let sourceRow = sourceBase + y * image.width * channels
                            var out = targetBase + y * width * channels
                            for x in 0..<width {
                                var pixel = sourceRow + starts[x] * channels
                                var weight = valueBase + x * taps
                                // The common layouts get their channels summed together in one pass.
                                switch channels {
                                case 3:
                                    var r = half, g = half, b = half
                                    for _ in 0..<taps {
                                        let k = weight.pointee
                                        r &+= k &* Int32(pixel[0]); g &+= k &* Int32(pixel[1]); b &+= k &* Int32(pixel[2])
                                        pixel += 3; weight += 1
                                    }
                                    out[0] = clamp(r); out[1] = clamp(g); out[2] = clamp(b)
                                case 1:
                                    var v = half
                                    for _ in 0..<taps {
                                        v &+= weight.pointee &* Int32(pixel[0])
                                        pixel += 1; weight += 1
                                    }
                                    out[0] = clamp(v)
                                default:
                                    for channel in 0..<channels {
                                        var sum = half
                                        for tap in 0..<taps { sum &+= weight[tap] &* Int32(pixel[tap * channels + channel]) }
                                        out[channel] = clamp(sum)
                                    }
                                }
                                out += channels
                            }
                        }
                    }
                }
            }
        }
        return PixelBuffer(width: width, height: image.height, channels: channels, pixels: output)
    }

    private static func vertical(_ image: PixelBuffer, height: Int, filter: Filter) -> PixelBuffer {
        let weights = Self.weights(source: image.height, target: height, filter: filter)
        let rowLength = image.width * image.channels, taps = weights.taps
        var output = [UInt8](repeating: 0, count: rowLength * height)
        var sums = [Int32](repeating: 0, count: rowLength)
        image.pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                sums.withUnsafeMutableBufferPointer { sums in
                    for y in 0..<height {
                        for index in 0..<rowLength { sums[index] = 1 << (precisionBits - 1) }
                        for tap in 0..<taps {
                            let weight = weights.values[y * taps + tap]
                            if weight == 0 { continue }
                            guard let row = source.baseAddress.map({ $0 + (weights.starts[y] + tap) * rowLength }),
                                  let sum = sums.baseAddress else { continue }
                            for index in 0..<rowLength { sum[index] &+= weight &* Int32(row[index]) }
                        }
                        let targetRow = y * rowLength
                        for index in 0..<rowLength { target[targetRow + index] = clamp(sums[index]) }
                    }
                }
            }
        }
        return PixelBuffer(width: image.width, height: height, channels: image.channels, pixels: output)
    }

    @inline(__always)
    private static func clamp(_ sum: Int32) -> UInt8 {
        let value = sum >> precisionBits
        return UInt8(truncatingIfNeeded: value < 0 ? 0 : (value > 255 ? 255 : value))
    }
}
