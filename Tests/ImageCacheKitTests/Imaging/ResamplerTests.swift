@testable import ImageCacheKit
import Testing
import TestSupport

/// The resampler's passes against a plain reference: the same fixed-point weights applied one
/// channel, one tap at a time. Each layout's loop (grey, RGB and RGBA summed together, the
/// rest channel by channel) must give exactly the reference's bytes, edges and clamping
/// included.
@Suite("Imaging: resampler")
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
                        sum &+= across.values[x * across.taps + tap] &* Int32(sample)
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
                    sum &+= down.values[y * down.taps + tap] &* Int32(narrowed[(down.starts[y] + tap) * width * channels + index])
                }
                result[y * width * channels + index] = clamp(sum)
            }
        }
        return result
    }

    @Test("every layout gives the reference's bytes, to the last pixel of the last row", arguments: [1, 3, 4])
    func matchesReference(channels: Int) {
        // Under three times the target on each axis: no box pre-shrink, the filter alone.
        let width = 301, height = 203
        var random = SplitMix64(seed: UInt64(channels) * 7919)
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for index in pixels.indices { pixels[index] = UInt8(truncatingIfNeeded: random.next()) }
        // Opaque, so RGBA's premultiplication changes nothing and the reference applies as is.
        if channels == 4 { for index in stride(from: 3, to: pixels.count, by: 4) { pixels[index] = 255 } }
        // Saturated edges too, where the lobes overshoot and the clamp works.
        for x in 0..<width { for c in 0..<min(channels, 3) { pixels[((height - 1) * width + x) * channels + c] = x % 2 == 0 ? 255 : 0 } }
        let image = PixelBuffer(width: width, height: height, channels: channels, pixels: pixels)
        let resized = Resampler.resize(image, width: 128, height: 87)
        #expect(resized.width == 128 && resized.height == 87 && resized.channels == channels)
        #expect(resized.pixels == Self.reference(image, width: 128, height: 87))
    }
}
