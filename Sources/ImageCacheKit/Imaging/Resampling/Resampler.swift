import Foundation

/// Shrinks pixels to an exact size with a separable, antialiased filter.
///
/// After the DCT scaling the picture is two to four times the target (`JPEGDecoder.thumbnailScale`
/// keeps that margin), so a filter whose support widens with the scale (as Pillow's and
/// libvips' do) averages every source pixel into the result: no aliasing, no skipped rows.
/// Weights are fixed-point and computed once per axis; `SeparableFilter` applies them, as dot
/// products of 8-bit samples and 16-bit weights.
enum Resampler {
    /// The filter kernel, widened with the scale as Pillow's and libvips' are. `lanczos3` is
    /// the default: from a decode at ≥ 2 × the target it measured closest to a full-decode
    /// reference, as sharp as libvips' (docs/benchmarks.md, "Thumbnail quality and colour");
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
                // sin(πx) = sin(3y) = 3 sin y − 4 sin³ y with y = πx/3: one sine, not two
                // (computing the weights was 1.5 % of a thumbnail's CPU).
                let px = Double.pi * x
                let third = sin(px / 3)
                return Self.lanczos3Weight(sine: third, px: px)
            }
        }

        /// `weight` at `count` points `step` apart from `x`, into `output`'s first `count`.
        /// A window's taps are evenly spaced, so Lanczos-3's sine advances by a rotation
        /// instead of being computed per tap: one sine and cosine per window, where a sine per
        /// tap was 0.8 % of a 256-px JPEG thumbnail's CPU (its error, ≈ 10⁻¹⁴ after the widest
        /// window, is far below the weights' 2⁻¹⁴).
        func weights(from x: Double, step: Double, count: Int, into output: inout [Double]) {
            guard case .lanczos3 = self else {
                for tap in 0..<count { output[tap] = weight(x + Double(tap) * step) }
                return
            }
            // sin(π t / 3) for t = x + k × step; its sign does not matter (the weight squares it).
            let angle = Double.pi / 3 * x, turn = Double.pi / 3 * step
            var sine = sin(angle), cosine = cos(angle)
            let turnSine = sin(turn), turnCosine = cos(turn)
            for tap in 0..<count {
                let t = abs(x + Double(tap) * step)
                output[tap] = t < 1e-9 ? 1 : (t >= 3 ? 0 : Self.lanczos3Weight(sine: sine, px: Double.pi * t))
                (sine, cosine) = (sine * turnCosine + cosine * turnSine, cosine * turnCosine - sine * turnSine)
            }
        }

        /// sinc(x) · sinc(x / 3) from sin(πx/3) and πx: sin(πx) = 3 sin y − 4 sin³ y with
        /// y = πx/3.
        @inline(__always)
        private static func lanczos3Weight(sine third: Double, px: Double) -> Double {
            3 * (3 - 4 * third * third) * third * third / (px * px)
        }
    }

    /// Fixed-point precision of the weights: a weight of 1 is 2^14, so every weight of a
    /// normalised window fits in an `Int16` and a sum of 8-bit samples in an `Int32`.
    static let precisionBits = 14

    /// Per output index: the first source index and its fixed-point weights.
    struct Weights {
        /// Samples the filter reads at once (`SeparableFilter.dots`): every window is padded
        /// with zero weights to a multiple of it.
        static let lanes = 8
        var starts: [Int]
        /// The window's length: `starts[i] + taps` never passes the source's end.
        var taps: Int
        /// `taps` rounded up to a multiple of `lanes`: output `i`'s weights are
        /// `values[i × stride ..< i × stride + taps]`, then zeros.
        var stride: Int
        var values: [Int16]

        /// One tap of weight 1 per index: an axis kept at its size.
        static func identity(_ count: Int) -> Weights {
            var values = [Int16](repeating: 0, count: count * lanes)
            for index in 0..<count { values[index * lanes] = Int16(1 << precisionBits) }
            return Weights(starts: Array(0..<count), taps: 1, stride: lanes, values: values)
        }
    }

    /// The weights of the axes resized lately, shared by every resize (`ResamplerWeightsCache`).
    static let recentWeights = ResamplerWeightsCache()

    static func weights(source: Int, target: Int, filter: Filter) -> Weights {
        let scale = Double(source) / Double(target)
        let filterScale = max(scale, 1)
        let support = filter.support * filterScale
        // Every window is read as `taps` samples from `starts[i]`, kept inside the source.
        let taps = min(source, Int((support * 2).rounded(.up)) + 1)
        let stride = (taps + Weights.lanes - 1) / Weights.lanes * Weights.lanes
        var starts = [Int](repeating: 0, count: target)
        var values = [Int16](repeating: 0, count: target * stride)
        var raw = [Double](repeating: 0, count: taps)
        var fixed = [Int32](repeating: 0, count: taps)
        for index in 0..<target {
            let center = (Double(index) + 0.5) * scale
            var first = max(0, Int((center - support).rounded(.down)))
            let last = min(source, Int((center + support).rounded(.up)), first + taps)
            var total = 0.0
            var count = max(0, last - first)
            filter.weights(from: (Double(first) + 0.5 - center) / filterScale, step: 1 / filterScale, count: count, into: &raw)
            for tap in 0..<count { total += raw[tap] }
            if total == 0 {
                // A window that caught no weight (a box on a tiny target): take the nearest pixel.
                first = min(source - 1, Int(center))
                raw[0] = 1
                total = 1
                count = 1
            }
            let start = min(first, source - taps)
            starts[index] = start
            // Normalise; the rounding remainder goes to the largest weight so each window sums exactly.
            for tap in 0..<taps { fixed[tap] = 0 }
            var sum: Int32 = 0
            var largest = first - start
            for tap in 0..<count {
                let value = Int32((raw[tap] / total * Double(1 << precisionBits)).rounded())
                fixed[first - start + tap] = value
                sum += value
                if value > fixed[largest] { largest = first - start + tap }
            }
            fixed[largest] += Int32(1 << precisionBits) - sum
            // A normalised Lanczos-3 window's weights lie within (−1, 2): always an Int16.
            for tap in 0..<taps { values[index * stride + tap] = Int16(clamping: fixed[tap]) }
        }
        return Weights(starts: starts, taps: taps, stride: stride, values: values)
    }

    /// Resizes `image` to exactly `width`×`height` (each no larger than the source's).
    ///
    /// RGBA is filtered premultiplied, so the undefined colour of fully transparent pixels
    /// never bleeds into the visible edge next to them.
    ///
    /// A picture more than three times the target on an axis is first box-shrunk by an
    /// integer factor to at least three times the target (`BoxShrinker`), then filtered.
    static func resize(_ image: PixelBuffer, width: Int, height: Int, filter: Filter = .lanczos3) -> PixelBuffer {
        if width == image.width && height == image.height { return image }
        let source = image.channels == 4 ? premultiplied(image) : image
        var passes = SeparableFilter(sourceWidth: image.width, sourceHeight: image.height, channels: image.channels,
                                     width: width, height: height, filter: filter)
        source.pixels.withUnsafeBufferPointer { pixels in
            guard let base = pixels.baseAddress else { return }
            passes.add(rows: base, count: image.height)
        }
        let result = passes.finish()
        return image.channels == 4 ? unpremultiplied(result) : result
    }

    /// Resizes an image that arrives in bands of rows, top to bottom, to exactly
    /// `width`×`height`: each band is narrowed as it comes, so only `width`-wide columns are
    /// kept (a 7000-px-wide PNG shrunk to 400 holds 400-px rows, not a full-size buffer). The
    /// result is the same, pixel for pixel, as `resize` of the whole image.
    ///
    /// - Parameter readBand: fills its buffer with the next `rows` rows of the source
    ///   (`sourceWidth × channels` bytes each) and throws when they cannot be read.
    static func resize<E: Error>(streaming sourceWidth: Int, _ sourceHeight: Int, channels: Int, width: Int, height: Int,
                                 filter: Filter = .lanczos3,
                                 readBand: (inout [UInt8], _ rows: Int) throws(E) -> Void) throws(E) -> PixelBuffer {
        let bandRows = PNGDecoder.bandRows
        let rowLength = sourceWidth * channels
        // As `resize`: an image kept at its size is not filtered, so not premultiplied either.
        let resizing = width != sourceWidth || height != sourceHeight
        let premultiply = channels == 4 && resizing
        var passes = resizing
            ? SeparableFilter(sourceWidth: sourceWidth, sourceHeight: sourceHeight, channels: channels,
                              width: width, height: height, filter: filter)
            : nil
        var kept: [UInt8] = []
        var band = [UInt8](repeating: 0, count: bandRows * rowLength)
        var y = 0
        while y < sourceHeight {
            let rows = min(bandRows, sourceHeight - y)
            try readBand(&band, rows)
            y += rows
            guard passes != nil else {
                kept += band.prefix(rows * rowLength)
                continue
            }
            if premultiply { Self.premultiply(&band, count: rows * rowLength) }
            band.withUnsafeBufferPointer { pixels in
                passes!.add(rows: pixels.baseAddress!, count: rows)
            }
        }
        guard var passes else { return PixelBuffer(width: width, height: height, channels: channels, pixels: kept) }
        let result = passes.finish()
        return premultiply ? unpremultiplied(result) : result
    }

    static func premultiplied(_ image: PixelBuffer) -> PixelBuffer {
        var result = image
        premultiply(&result.pixels, count: result.pixels.count)
        return result
    }

    /// Premultiplies the first `count` bytes of RGBA `pixels` by their alpha, in place.
    static func premultiply(_ pixels: inout [UInt8], count: Int) {
        pixels.withUnsafeMutableBufferPointer { pixels in
            for index in stride(from: 0, to: count, by: 4) {
                let alpha = UInt32(pixels[index + 3])
                for channel in 0..<3 {
                    pixels[index + channel] = UInt8((UInt32(pixels[index + channel]) * alpha + 127) / 255)
                }
            }
        }
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
}
