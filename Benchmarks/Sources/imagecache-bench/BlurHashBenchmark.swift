import ArgumentParser
import Foundation
import ImageCacheProtocol

/// The placeholder's cost per image (target ≤ 0.2 ms): `BlurHash.encodeThumbnail` on
/// decoded thumbnails of the sizes the daemon makes, and `BlurHash.parse` of a provider's hash.
///
/// The pixels are a photo-like pattern (gradients and noise from a fixed seed) made once; the
/// figure is the median of several runs of many encodes each, in CPU time of this thread.
struct BlurHashBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blurhash",
        abstract: "BlurHash per thumbnail: encode from 256 and 512 px decoded thumbnails, parse of a hash.")

    @Option(help: "Encodes per run.")
    var count = 2_000

    @Option(help: "Runs (the median is reported).")
    var runs = 5

    func run() throws {
        for (width, height) in [(256, 171), (256, 384), (512, 341)] {
            let pixels = Self.photoLike(width: width, height: height)
            var hash = ""
            let perImage = median(runs) {
                pixels.withUnsafeBufferPointer { buffer in
                    for _ in 0..<count { hash = BlurHash.encodeThumbnail(buffer, width: width, height: height) ?? "" }
                }
            } / Double(count)
            print(String(format: "encode %d×%d: %.1f µs per image (%@)", width, height, perImage * 1e6, hash))
        }
        let hash = "LEHV6nWB2yk8pyo0adR*.7kCMdnj"
        let perParse = median(runs) { for _ in 0..<count { _ = try? BlurHash.parse(hash) } } / Double(count)
        print(String(format: "parse: %.2f µs per hash", perParse * 1e6))
    }

    /// The median CPU seconds of `runs` runs of `body`.
    func median(_ runs: Int, _ body: () -> Void) -> Double {
        var times: [Double] = []
        for _ in 0..<max(1, runs) {
            let start = Self.cpuSeconds()
            body()
            times.append(Self.cpuSeconds() - start)
        }
        return times.sorted()[times.count / 2]
    }

    static func cpuSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// RGB bytes with smooth gradients and some noise, the same every run.
    static func photoLike(width: Int, height: Int) -> [UInt8] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let noise = Int(state >> 59)
                let p = (y * width + x) * 3
                pixels[p] = UInt8(clamping: 40 + x * 180 / width + noise)
                pixels[p + 1] = UInt8(clamping: 90 + y * 120 / height + noise)
                pixels[p + 2] = UInt8(clamping: 200 - (x + y) * 150 / (width + height) + noise)
            }
        }
        return pixels
    }
}
