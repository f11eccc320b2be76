import ArgumentParser
import Foundation
import ImageCacheKit

/// Verification throughput on one thread: `StreamingVerifier` fed each photo in
/// chunks, against `Thumbnailer.validate` on the whole body, interleaved round by round.
///
/// Bodies are read into memory first (no file I/O is timed). Prints one JSON line per method:
/// MB/s on one core, ms per photo, and for streaming the time from the last chunk's feed to
/// the verdict (what a download waits after its last byte when the link is slower than the
/// decoder).
struct VerifyBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Streaming vs whole-file verification of every image in a folder, on one thread.",
        discussion: """
            Example:
              imagecache-bench download --prepare /tmp/photos --count 5
              imagecache-bench verify /tmp/photos --rounds 5
            """
    )

    @Argument(help: "A folder of JPEG/PNG images, or image files.")
    var inputs: [String]

    @Option(help: "Passes over the images; the methods alternate within each.")
    var rounds = 3

    @Option(help: "Bytes per feed of the streaming verifier (a network read is 16–64 KiB).")
    var chunk = 65_536

    func run() throws {
        let files = try ThumbnailBenchmark.expand(inputs)
        guard !files.isEmpty else { throw ValidationError("no images found in \(inputs)") }
        guard chunk >= 1 else { throw ValidationError("--chunk must be at least 1") }
        let bodies = try files.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0))) }
        let totalBytes = bodies.reduce(0) { $0 + $1.count }
        let clock = ContinuousClock()
        var whole = Duration.zero
        var streamed = Duration.zero
        var tails: [Duration] = []
        for round in 0..<rounds {
            // Alternate which method goes first, so neither always runs on a warm cache.
            for method in round % 2 == 0 ? [0, 1] : [1, 0] {
                for body in bodies {
                    if method == 0 {
                        whole += try clock.measure { _ = try Thumbnailer.validate(body) }
                    } else {
                        let (duration, tail) = try streamOnce(body, clock: clock)
                        streamed += duration
                        tails.append(tail)
                    }
                }
            }
        }
        let megabytes = Double(totalBytes * rounds) / 1_000_000
        let photos = bodies.count * rounds
        tails.sort()
        let p50 = tails.isEmpty ? 0 : Self.milliseconds(tails[tails.count / 2])
        print(String(format: #"{"method":"validate","photos":%d,"mb":%.1f,"seconds":%.3f,"mb_per_s":%.1f,"ms_per_photo":%.2f}"#,
                     photos, megabytes, Self.seconds(whole), megabytes / Self.seconds(whole),
                     Self.milliseconds(whole) / Double(photos)))
        print(String(format: #"{"method":"streaming","chunk":%d,"photos":%d,"mb":%.1f,"seconds":%.3f,"mb_per_s":%.1f,"ms_per_photo":%.2f,"last_feed_to_verdict_p50_ms":%.3f}"#,
                     chunk, photos, megabytes, Self.seconds(streamed), megabytes / Self.seconds(streamed),
                     Self.milliseconds(streamed) / Double(photos), p50))
    }

    /// One streaming verification: its whole duration, and the time from the last feed's
    /// start to `finish()`'s answer.
    private func streamOnce(_ body: [UInt8], clock: ContinuousClock) throws -> (Duration, Duration) {
        let verifier = StreamingVerifier()
        let start = clock.now
        var lastFeed = start
        try body.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let end = min(raw.count, offset + chunk)
                lastFeed = clock.now
                try verifier.feed(UnsafeRawBufferPointer(rebasing: raw[offset..<end]))
                offset = end
            }
        }
        _ = try verifier.finish()
        let end = clock.now
        return (end - start, end - lastFeed)
    }

    static func seconds(_ duration: Duration) -> Double { ThumbnailBenchmark.seconds(duration) }

    static func milliseconds(_ duration: Duration) -> Double { seconds(duration) * 1000 }
}
