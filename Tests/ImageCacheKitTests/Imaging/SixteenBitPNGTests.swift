@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

/// A 16-bit PNG without gAMA/sRGB holds sRGB-encoded samples, as Pillow and
/// libvips read it: Pillow's `RGB;16B` unpacker keeps each sample's high byte, libvips divides
/// by 256 going to 8 bits; both give `v >> 8`. libpng's simplified reader defaulted to linear
/// light, 24–65/255 too bright in the mid-tones.
@Suite("Imaging: 16-bit PNGs render like Pillow and libvips", .timeLimit(.minutes(2)))
struct SixteenBitPNGTests {
    /// What Pillow and libvips show for a 16-bit sample.
    static func reference(_ sample: UInt16) -> Int { Int(sample >> 8) }

    @Test("a 16-bit grey ramp, as grey and as RGB, decodes within 2/255 of Pillow's rendering", arguments: [1, 3])
    func greyRamp(channels: Int) throws {
        let width = 1024, height = 4
        var samples: [UInt16] = []
        for _ in 0..<height {
            for x in 0..<width {
                let value = UInt16(x * 65_535 / (width - 1))
                samples += Array(repeating: value, count: channels)
            }
        }
        let png = PNGChunks.sixteenBit(width: width, height: height, channels: channels, samples: samples)
        let pixels = try png.withUnsafeBytes { try PNGDecoder.decode($0) }
        #expect(pixels.channels == channels)
        #expect(largestDifference(pixels, samples) <= 2)
    }

    @Test("a photo-like 16-bit RGB image decodes within 2/255 of Pillow's rendering")
    func photoLike() throws {
        let width = 320, height = 240
        var random = SplitMix64(seed: 16)
        var samples: [UInt16] = []
        samples.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                // Gradients, a hard-edged disc and sensor-like noise in all 16 bits.
                let inDisc = (x - 200) * (x - 200) + (y - 100) * (y - 100) < 60 * 60
                let base = inDisc ? [52_000, 12_000, 9_000] : [x * 200, y * 270, 30_000 + (x + y) * 40]
                for channel in 0..<3 {
                    let noise = Int(random.next() % 1_500) - 750
                    samples.append(UInt16(clamping: base[channel] + noise))
                }
            }
        }
        let png = PNGChunks.sixteenBit(width: width, height: height, channels: 3, samples: samples)
        let pixels = try png.withUnsafeBytes { try PNGDecoder.decode($0) }
        #expect(largestDifference(pixels, samples) <= 2)
    }

    private func largestDifference(_ pixels: PixelBuffer, _ samples: [UInt16]) -> Int {
        #expect(pixels.pixels.count == samples.count)
        var largest = 0
        for (decoded, sample) in zip(pixels.pixels, samples) {
            largest = max(largest, abs(Int(decoded) - Self.reference(sample)))
        }
        return largest
    }
}
