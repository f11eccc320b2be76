import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

@Suite("Imaging: hostile input", .timeLimit(.minutes(5)))
struct HostileInputTests {
    @Test("decompression bombs are refused as too_large from the header, in well under a second")
    func bombsAreRefusedFast() throws {
        for path in ["jpeg/libjpeg-turbo-seed-corpora/github_197_poc_min.jpg",
                     "jpeg/jpeg-decoder/crashtest/imagetestsuite_6903d4538fd33c8fd0ded32cb30d618e.jpg"] {
            let bytes = try Corpus.bytes(path)
            guard case .header(let header) = try ImageHeaderProbe.probe(bytes) else { Issue.record("\(path)"); continue }
            let expected = try CorpusExpectations.shared().entries[path]
            #expect((header.storedWidth, header.storedHeight) == (expected?.width, expected?.height), "\(path)")
            let clock = ContinuousClock()
            let elapsed = clock.measure {
                expectRPCError(.tooLarge) { _ = try Thumbnailer.validate(bytes) }
                expectRPCError(.tooLarge) { _ = try Thumbnailer.makeThumbnail(from: bytes, width: 256) }
            }
            // The library takes 9–14 s on these; refusing from the header takes microseconds.
            // The bound is generous so a loaded machine cannot fail it.
            #expect(elapsed < .seconds(2), "\(path): \(elapsed)")
        }
    }

    @Test("every crashtest, seed-corpus and libpng crasher file ends in a result or a clean error")
    func crashTestFiles() throws {
        let folders = ["jpeg/jpeg-decoder/crashtest", "jpeg/libjpeg-turbo-seed-corpora", "jpeg/jpeg-decoder/reftest",
                       "png/libpng-crashers", "png/pillow", "png/image-png"]
        var count = 0
        for folder in folders {
            for path in try Corpus.files(in: folder) {
                let bytes = try Corpus.bytes(path)
                survives(bytes, label: path, maxPixels: Thumbnailer.defaultMaxPixels)
                count += 1
            }
        }
        #expect(count > 200)
    }

    @Test("fuzz: random truncations and bit flips of corpus files never crash or hang")
    func fuzz() throws {
        var seeds: [[UInt8]] = []
        for folder in ["jpeg/libjpeg-turbo", "jpeg/pillow", "jpeg/jpeg-decoder/reftest", "pngsuite", "png/image-png"] {
            for path in try Corpus.files(in: folder) {
                let bytes = try Corpus.bytes(path)
                if bytes.count <= 64_000 { seeds.append(bytes) }
            }
        }
        // A fixed number of cases from a fixed seed, not as many as fit in a time: the same
        // mutations run on a fast machine and on a loaded one under the sanitizer, so a red run
        // names a case that fails again, and a slow machine cannot fail the count.
        var random = SplitMix64(seed: 0x1DEA_5EED)
        let caseCount = 100
        for iteration in 0..<caseCount {
            var bytes = seeds[Int(random.next() % UInt64(seeds.count))]
            switch random.next() % 3 {
            case 0:
                bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count + 1))))
            case 1:
                for _ in 0..<(1 + random.next() % 8) where !bytes.isEmpty {
                    bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(1 << (random.next() % 8))
                }
            default:
                for _ in 0..<(1 + random.next() % 4) where !bytes.isEmpty {
                    bytes[Int(random.next() % UInt64(min(bytes.count, 400)))] = UInt8(truncatingIfNeeded: random.next())
                }
            }
            // A flipped size byte can declare a large image; a small limit keeps each decode short.
            survives(bytes, label: "fuzz case \(iteration)", maxPixels: 4_000_000)
        }
    }

    /// Probe (every prefix length class), validate and thumbnail: each must return or throw an
    /// RPCError of an expected kind.
    private func survives(_ bytes: [UInt8], label: String, maxPixels: Int) {
        let allowed: Set<ErrorKind> = [.decodeFailed, .tooLarge]
        for length in [bytes.count / 3, bytes.count] {
            do { _ = try ImageHeaderProbe.probe(Array(bytes.prefix(length))) } catch {
                #expect(allowed.contains(error.kind), "\(label): \(error)")
            }
        }
        do { _ = try Thumbnailer.validate(bytes, maxPixels: maxPixels) } catch {
            #expect(allowed.contains(error.kind), "\(label): \(error)")
        }
        do { _ = try Thumbnailer.makeThumbnail(from: bytes, width: 64, maxPixels: maxPixels) } catch {
            #expect(allowed.contains(error.kind), "\(label): \(error)")
        }
    }
}
