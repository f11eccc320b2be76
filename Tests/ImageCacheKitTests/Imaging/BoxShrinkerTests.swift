@testable import ImageCacheKit
import Testing
import TestSupport

/// The integer box pre-shrink in front of the filter: exact averages (partial boxes at the
/// right and bottom edges too, every layout, column sums folded at any row), factors that
/// keep three times the target, and the streaming resize still giving the whole resize's pixels.
@Suite("Imaging: box pre-shrink", .timeLimit(.minutes(2)))
struct BoxShrinkerTests {
    @Test("averages, with the partial boxes at the edges")
    func averages() {
        // 5 × 3 grey, factor 2 × 2: boxes of 2×2, 2×2, 1×2 on top, 2×1, 2×1, 1×1 below.
        let source: [UInt8] = [
            0, 10, 20, 30, 40,
            100, 110, 120, 130, 140,
            200, 210, 220, 230, 250,
        ]
        var shrinker = BoxShrinker(sourceWidth: 5, channels: 1, factorX: 2, factorY: 2)
        var output: [UInt8] = []
        source.withUnsafeBufferPointer { pixels in
            for y in 0..<3 { shrinker.add(row: pixels.baseAddress! + y * 5, into: &output) }
        }
        #expect(output == [55, 75, 90])  // after two rows
        shrinker.finish(into: &output)
        #expect(output == [55, 75, 90, 205, 225, 250])
        #expect(shrinker.width == 3)
    }

    @Test("every layout's boxes are the rounded means, however often the column sums are folded",
          arguments: [1, 2, 3, 4, 5])
    func meansForEveryLayout(channels: Int) {
        let width = 37, height = 29, factorX = 4, factorY = 3
        var state: UInt32 = UInt32(channels) * 7919
        let pixels: [UInt8] = (0..<(width * height * channels)).map { _ in
            state = state &* 1_103_515_245 &+ 12345
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        // The reference: each box's samples summed one by one.
        var expected: [UInt8] = []
        for boxY in stride(from: 0, to: height, by: factorY) {
            for boxX in stride(from: 0, to: width, by: factorX) {
                for channel in 0..<channels {
                    var sum = 0, count = 0
                    for y in boxY..<min(boxY + factorY, height) {
                        for x in boxX..<min(boxX + factorX, width) { sum += Int(pixels[(y * width + x) * channels + channel]); count += 1 }
                    }
                    expected.append(UInt8((sum + count / 2) / count))
                }
            }
        }
        for interval in [1, 2, 1 << 24] {
            var shrinker = BoxShrinker(sourceWidth: width, channels: channels, factorX: factorX, factorY: factorY,
                                       foldInterval: interval)
            var output: [UInt8] = []
            pixels.withUnsafeBufferPointer { pixels in
                for y in 0..<height { shrinker.add(row: pixels.baseAddress! + y * width * channels, into: &output) }
            }
            shrinker.finish(into: &output)
            #expect(output == expected, "folded every \(interval) rows")
        }
    }

    @Test("the rounded mean by reciprocal is the division's, for every sum a box can hold")
    func roundedMeanByReciprocal() {
        // Every sum for small boxes, the extremes and a spread for large ones, up to and past
        // the 2^28 where the reciprocal gives way to a division.
        var mismatches: [String] = []
        for count in [1, 2, 3, 5, 7, 9, 12, 25, 49, 100, 255, 1000, 4095] as [UInt64] {
            let mean = RoundedMean(count: count)
            for sum in 0...(255 * count) where mean(sum) != (sum + count / 2) / count {
                mismatches.append("\(sum)/\(count)")
            }
        }
        var random = SplitMix64(seed: 28)
        for count in [(1 << 28) - 1, 1 << 28, (1 << 28) + 1, 3 * (1 << 26) + 1, 1 << 20, 999_983] as [UInt64] {
            let mean = RoundedMean(count: count)
            var sums: [UInt64] = [0, count / 2, count, 255 * count, 255 * count - 1, 128 * count + count / 2]
            for _ in 0..<10_000 { sums.append(UInt64.random(in: 0...(255 * count), using: &random)) }
            for sum in sums where mean(sum) != (sum + count / 2) / count { mismatches.append("\(sum)/\(count)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }

    @Test("factors keep the shrunk picture at least three times the target")
    func factors() {
        #expect(BoxShrinker.factors(sourceWidth: 2400, sourceHeight: 1600, width: 256, height: 171) == (3, 3))
        #expect(BoxShrinker.factors(sourceWidth: 1535, sourceHeight: 1100, width: 256, height: 175) == (1, 2))
        #expect(BoxShrinker.factors(sourceWidth: 700, sourceHeight: 500, width: 256, height: 171) == (1, 1))
        // A zero target (never asked for) cannot divide by zero: its margin counts as one pixel.
        #expect(BoxShrinker.factors(sourceWidth: 10, sourceHeight: 10, width: 0, height: 0) == (10, 10))
    }

    @Test("the streaming resize gives the whole resize's pixels through the pre-shrink", arguments: [3, 4])
    func streamingMatchesWhole(channels: Int) {
        let width = 1037, height = 611
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        var state: UInt32 = 12345
        for index in pixels.indices {
            state = state &* 1_103_515_245 &+ 12345
            pixels[index] = UInt8(truncatingIfNeeded: (index / channels % width) / 5 + Int(state >> 28))
        }
        let image = PixelBuffer(width: width, height: height, channels: channels, pixels: pixels)
        let whole = Resampler.resize(image, width: 120, height: 71)
        var row = 0
        let streamed = Resampler.resize(streaming: width, height, channels: channels, width: 120, height: 71) { (band: inout [UInt8], rows: Int) in
            let length = width * channels
            for r in 0..<rows {
                band.replaceSubrange(r * length..<(r + 1) * length, with: pixels[(row + r) * length..<(row + r + 1) * length])
            }
            row += rows
        }
        #expect(whole.width == 120 && whole.height == 71)
        #expect(streamed.pixels == whole.pixels)
    }
}
