import ArgumentParser
import Foundation
import ImageCacheKit

/// CPU per cold thumbnail, in process: every photo of a folder, already in memory, through the
/// pipeline's own processing (`ColdThumbnailProcessing`: the cost the budget admits by, then
/// the decode, resample, encode and placeholder), pass after pass.
///
/// The figure is process CPU time (`CLOCK_PROCESS_CPUTIME_ID`) per photo, the median of the
/// passes after one warm-up pass, so that one version of the code can be compared with another
/// to a tenth of a millisecond without a daemon, a socket or a disk in the way. `--output`
/// writes the last pass's thumbnails for `Benchmarks/scripts/thumbnail_ssim.py`.
struct ThumbnailCPUBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail-cpu",
        abstract: "CPU ms per cold thumbnail through the pipeline's processing (median of passes).",
        discussion: """
            Examples:
              imagecache-bench thumbnail-cpu /tmp/imagecached-thumbnail-bench/photos/baseline --size 256
              imagecache-bench thumbnail-cpu photos/baseline photos/progressive --passes 9 --output /tmp/thumbs
            """
    )

    @Argument(help: "Folders of JPEG/PNG images, or image files.")
    var inputs: [String]

    @Option(help: "The requested thumbnail size (the contract's `size`).")
    var size = 256

    @Option(help: "JPEG quality of the thumbnails.")
    var quality = 82

    @Option(help: "Measured passes over the photos (after one warm-up pass); the median is reported.")
    var passes = 7

    @Flag(inversion: .prefixedNo, help: "Compute the placeholder, as a cold fetch without a provider's does.")
    var placeholder = true

    @Option(help: "Write each thumbnail here as <name>.jpg/.png (for the quality check).")
    var output: String?

    func run() throws {
        let files = try ThumbnailBenchmark.expand(inputs)
        guard !files.isEmpty else { throw ValidationError("no images found in \(inputs)") }
        let bodies = try files.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0))) }
        if let output { try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true) }
        var checksum = 0
        var perPass: [Double] = []
        for pass in 0...max(1, passes) {
            let start = Self.cpuSeconds()
            for body in bodies {
                let made = try ColdThumbnailProcessing.run(body, size: size, quality: quality, placeholder: placeholder)
                checksum &+= made.bytes.count
            }
            let spent = Self.cpuSeconds() - start
            if pass > 0 { perPass.append(spent / Double(bodies.count)) }
        }
        if let output {
            for (file, body) in zip(files, bodies) {
                let made = try ColdThumbnailProcessing.run(body, size: size, quality: quality, placeholder: placeholder)
                let name = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
                let path = output + "/" + name + (made.mime == "image/png" ? ".png" : ".jpg")
                try Data(made.bytes).write(to: URL(fileURLWithPath: path))
            }
        }
        let sorted = perPass.sorted()
        print(ThumbnailBenchmark.json([
            "tool": "imagecached-thumbnail-cpu", "photos": "\(bodies.count)", "size": "\(size)", "passes": "\(sorted.count)",
            "cpuMsPerPhotoMedian": String(format: "%.3f", sorted[sorted.count / 2] * 1e3),
            "cpuMsPerPhotoMin": String(format: "%.3f", sorted[0] * 1e3),
            "cpuMsPerPhotoMax": String(format: "%.3f", sorted[sorted.count - 1] * 1e3),
            "bytesChecksum": "\(checksum)",
        ]))
    }

    /// This process's CPU seconds (every thread: the processing runs on this one).
    static func cpuSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
