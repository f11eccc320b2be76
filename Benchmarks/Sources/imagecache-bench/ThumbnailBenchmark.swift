import ArgumentParser
import Foundation
import ImageCacheKit

/// Thumbnails from full-size photos on one thread, as the daemon makes them: read the file,
/// probe, decode at the smallest covering DCT scale, resample to the exact width, encode.
///
/// Prints one JSON line (images, seconds, images/s, peak RSS) so that
/// `Benchmarks/scripts/thumbnails.sh` can put it beside vipsthumbnail and Pillow measured in
/// the same run. The timing is in-process (start-up excluded); the script also times whole
/// processes to compare like with like.
struct ThumbnailBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnails",
        abstract: "Make thumbnails of every image in a folder on one thread; report images/s and peak RSS.",
        discussion: """
            Examples:
              imagecache-bench thumbnails photos/baseline --width 256 --output /tmp/thumbs
              imagecache-bench thumbnails photos/baseline --probe-only
            """
    )

    @Argument(help: "A folder of JPEG/PNG images, or image files.")
    var inputs: [String]

    @Option(help: "Thumbnail width in pixels.")
    var width = 256

    @Option(help: "JPEG quality of the thumbnails.")
    var quality = 82

    @Option(help: "Write each thumbnail here as <name>.jpg/.png (for the quality check).")
    var output: String?

    @Option(help: "Passes over the images (the figures are for all passes together).")
    var rounds = 1

    @Flag(help: "Use TurboJPEG's fast IDCT and upsampling.")
    var fast = false

    @Flag(help: "Only measure the header probe, on bodies already in memory.")
    var probeOnly = false

    @Flag(help: "Only validate (decode at 1/8 scale, no resampling or encoding): the library's share.")
    var validateOnly = false

    func run() throws {
        let files = try Self.expand(inputs)
        guard !files.isEmpty else { throw ValidationError("no images found in \(inputs)") }
        if probeOnly {
            try probe(files)
            return
        }
        if let output { try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true) }
        let clock = ContinuousClock()
        var failures = 0
        let elapsed = try clock.measure {
            for _ in 0..<rounds {
                for file in files {
                    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
                    do {
                        if validateOnly {
                            _ = try Thumbnailer.validate(bytes)
                            continue
                        }
                        let thumbnail = try Thumbnailer.makeThumbnail(from: bytes, width: width, quality: quality,
                                                                      fastDecode: fast)
                        if let output {
                            let name = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
                            let path = output + "/" + name + (thumbnail.format == .png ? ".png" : ".jpg")
                            try Data(thumbnail.bytes).write(to: URL(fileURLWithPath: path))
                        }
                    } catch {
                        failures += 1
                        FileHandle.standardError.write(Data("\(file): \(error)\n".utf8))
                    }
                }
            }
        }
        let seconds = Self.seconds(elapsed)
        let images = files.count * rounds
        print(Self.json([
            "tool": "imagecached\(fast ? "-fast" : "")\(validateOnly ? "-validate" : "")", "images": "\(images)", "failures": "\(failures)",
            "seconds": String(format: "%.4f", seconds), "imagesPerSecond": String(format: "%.1f", Double(images) / seconds),
            "peakRSSKiB": "\(Self.peakRSSKiB())",
        ]))
    }

    /// Probes every body, already in memory, many times over: the per-call cost the pipeline
    /// pays for each chunk that arrives before the header is complete.
    private func probe(_ files: [String]) throws {
        let bodies = try files.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0))) }
        let iterations = max(1, 200_000 / bodies.count)
        var found = 0
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            for _ in 0..<iterations {
                for body in bodies {
                    if case .header(let header) = try ImageHeaderProbe.probe(body) { found &+= header.width }
                }
            }
        }
        let calls = iterations * bodies.count
        print(Self.json([
            "tool": "imagecached-probe", "calls": "\(calls)", "checksum": "\(found)",
            "nanosecondsPerProbe": String(format: "%.1f", Self.seconds(elapsed) * 1e9 / Double(calls)),
        ]))
    }

    static func expand(_ inputs: [String]) throws -> [String] {
        var files: [String] = []
        for input in inputs {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory) else {
                throw ValidationError("no such file or folder: \(input)")
            }
            if isDirectory.boolValue {
                files += try FileManager.default.contentsOfDirectory(atPath: input).sorted()
                    .filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".jpeg") || $0.hasSuffix(".png") }
                    .map { input + "/" + $0 }
            } else {
                files.append(input)
            }
        }
        return files
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func peakRSSKiB() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_maxrss)
    }

    static func json(_ fields: KeyValuePairs<String, String>) -> String {
        "{" + fields.map { key, value in
            let quoted = Double(value) == nil ? "\"\(value)\"" : value
            return "\"\(key)\": \(quoted)"
        }.joined(separator: ", ") + "}"
    }
}
