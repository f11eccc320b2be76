@testable import ImageCacheKit
import Testing
import TestSupport

/// The resampler's passes against a plain reference: the same fixed-point weights applied one
/// channel, one tap at a time. `SeparableFilter`'s planes, transposed columns and eight-wide
/// dot products must give exactly the reference's bytes for every layout (grey, grey and
/// alpha, RGB, RGBA), edges, zero-padded windows and clamping included.
@Suite("Imaging: resampler", .timeLimit(.minutes(1)))
struct ResamplerTests {
    /// `image` filtered along x then y with `Resampler.weights`, sample by sample.
    static func reference(_ image: PixelBuffer, width: Int, height: Int) -> [UInt8] {
        let channels = image.channels
        let half: Int32 = 1 << 13
        func clamp(_ sum: Int32) -> UInt8 { UInt8(max(0, min(255, sum >> 14))) }
        let across = Resampler.weights(source: image.width, target: width, filter: .lanczos3)
        var narrowed = [UInt8](repeating: 0, count: width * image.height * channels)
        for y in 0..<image.height {
            for x in 0..<width {
                for c in 0..<channels {
                    var sum = half
                    for tap in 0..<across.taps {
                        let sample = image.pixels[(y * image.width + across.starts[x] + tap) * channels + c]
                        sum &+= Int32(across.values[x * across.stride + tap]) &* Int32(sample)
                    }
                    narrowed[(y * width + x) * channels + c] = clamp(sum)
                }
            }
        }
        let down = Resampler.weights(source: image.height, target: height, filter: .lanczos3)
        var result = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            for index in 0..<(width * channels) {
                var sum = half
                for tap in 0..<down.taps {
                    sum &+= Int32(down.values[y * down.stride + tap]) &* Int32(narrowed[(down.starts[y] + tap) * width * channels + index])
                }
                result[y * width * channels + index] = clamp(sum)
            }
        }
        return result
    }

    /// Random samples, opaque, with a saturated last row where the lobes overshoot.
    static func noise(width: Int, height: Int, channels: Int) -> PixelBuffer {
        var random = SplitMix64(seed: UInt64(channels) * 7919)
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for index in pixels.indices { pixels[index] = UInt8(truncatingIfNeeded: random.next()) }
        // Opaque, so RGBA's premultiplication changes nothing and the reference applies as is.
        if channels == 4 { for index in stride(from: 3, to: pixels.count, by: 4) { pixels[index] = 255 } }
        // Saturated edges too, where the lobes overshoot and the clamp works.
        for x in 0..<width { for c in 0..<min(channels, 3) { pixels[((height - 1) * width + x) * channels + c] = x % 2 == 0 ? 255 : 0 } }
        return PixelBuffer(width: width, height: height, channels: channels, pixels: pixels)
    }

    @Test("every layout gives the reference's bytes, to the last pixel of the last row", arguments: [1, 2, 3, 4])
    func matchesReference(channels: Int) {
        // Under three times the target on each axis: no box pre-shrink, the filter alone.
        // 301 px: sixteen-pixel splits and a tail; 203 rows: groups of eight rows and three
        // left over; 127 × channels samples a row: groups of four samples and a rest (y pass).
        let image = Self.noise(width: 301, height: 203, channels: channels)
        for (width, height) in [(128, 87), (127, 86)] {
            let resized = Resampler.resize(image, width: width, height: height)
            #expect(resized.width == width && resized.height == height && resized.channels == channels)
            #expect(resized.pixels == Self.reference(image, width: width, height: height), "\(width)×\(height)")
        }
    }

    @Test("an axis kept at its size passes through, the other is filtered as the reference does",
          arguments: [(301, 87), (128, 203), (300, 202)])
    func oneAxisKept(width: Int, height: Int) {
        let image = Self.noise(width: 301, height: 203, channels: 3)
        let resized = Resampler.resize(image, width: width, height: height)
        #expect(resized.width == width && resized.height == height)
        #expect(resized.pixels == Self.reference(image, width: width, height: height))
    }

    @Test("every window's weights sum to one, fit 16 bits, and are zero past its taps")
    func weightsArePadded() {
        for (source, target) in [(600, 256), (1200, 512), (9, 1), (301, 300), (17, 16), (3, 2)] {
            let weights = Resampler.weights(source: source, target: target, filter: .lanczos3)
            #expect(weights.stride % Resampler.Weights.lanes == 0 && weights.stride >= weights.taps)
            for index in 0..<target {
                let window = weights.values[(index * weights.stride)..<((index + 1) * weights.stride)]
                #expect(window.reduce(0) { $0 + Int32($1) } == 1 << Resampler.precisionBits)
                #expect(window.dropFirst(weights.taps).allSatisfy { $0 == 0 })
                #expect(weights.starts[index] >= 0 && weights.starts[index] + weights.taps <= source)
            }
        }
    }

    @Test("weights kept for a geometry are those computed afresh; the cache keeps its capacity and no huge table")
    func recentWeightsAreTheComputedOnes() {
        let cache = ResamplerWeightsCache(capacity: 3)
        func same(_ a: Resampler.Weights, _ b: Resampler.Weights) -> Bool {
            a.starts == b.starts && a.taps == b.taps && a.stride == b.stride && a.values == b.values
        }
        let geometries = [(600, 256, Resampler.Filter.lanczos3), (600, 256, .cubic), (400, 171, .lanczos3),
                          (300, 128, .lanczos3), (600, 256, .lanczos3), (17, 16, .triangle)]
        for (source, target, filter) in geometries + geometries {
            let fresh = Resampler.weights(source: source, target: target, filter: filter)
            #expect(same(cache.weights(source: source, target: target, filter: filter), fresh), "\(source) → \(target) \(filter)")
            #expect(cache.count <= 3)
        }
        // 8192 outputs of a 3-to-1 Lanczos window (32 taps a window) take 512 KiB: computed, not kept.
        let before = cache.count
        let huge = cache.weights(source: 24576, target: 8192, filter: .lanczos3)
        #expect(same(huge, Resampler.weights(source: 24576, target: 8192, filter: .lanczos3)))
        #expect(huge.values.count * 2 > ResamplerWeightsCache.largestTable)
        #expect(cache.count == before)
    }

    @Test("Lanczos-3 over a window, its sine advanced by rotation, is the kernel evaluated tap by tap")
    func windowWeightsMatchTheKernel() {
        // The scales the filter meets (after the box pre-shrink, under 6), windows that start
        // on either side of the centre and cross zero and ±3, and the widest window.
        for (scale, start, count) in [(2.34, -7.1, 16), (1.0, -3.5, 8), (5.9, -17.6, 37), (1.17, 0.3, 4), (3.0, -9.0, 19)] {
            var weights = [Double](repeating: .nan, count: count)
            Resampler.Filter.lanczos3.weights(from: start / scale, step: 1 / scale, count: count, into: &weights)
            for tap in 0..<count {
                let expected = Resampler.Filter.lanczos3.weight((start + Double(tap)) / scale)
                #expect(abs(weights[tap] - expected) < 1e-12, "scale \(scale), tap \(tap): \(weights[tap]) vs \(expected)")
            }
        }
    }
}
