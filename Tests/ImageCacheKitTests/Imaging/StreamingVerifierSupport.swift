import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import ImageCacheServer
import TestSupport

/// What a verification concluded, in a form two verifiers can be compared by: the header, or
/// the error's kind and sniffed format (messages may differ: the streaming verifier can stop
/// at an earlier problem than the whole-file one reports first).
enum VerifierVerdict: Equatable, CustomStringConvertible {
    case image(ImageHeader)
    case refused(ErrorKind, format: String?)

    init(_ error: RPCError) { self = .refused(error.kind, format: error.data.format) }

    /// The verdict a client would read for an Imaging refusal (through the wire mapping).
    init(_ error: ImagingError) { self.init(WireErrorMapping.rpcError(for: error)) }

    var isImage: Bool { if case .image = self { return true } else { return false } }

    var description: String {
        switch self {
        case .image(let header): return "image \(header.format.rawValue) \(header.width)×\(header.height)"
        case .refused(let kind, let format): return "\(kind.rawValue) (\(format ?? "no format"))"
        }
    }
}

/// One streaming verification: its verdict and, when a feed refused the body, how many bytes
/// had been fed by then (nil when the refusal came from `finish()` or the body was accepted).
struct StreamedRun {
    var verdict: VerifierVerdict
    var refusedAfter: Int?
    var error: RPCError?
}

/// `Thumbnailer.validate`'s verdict on a whole body.
func wholeFileVerdict(_ bytes: [UInt8], maxPixels: Int = Thumbnailer.defaultMaxPixels) -> VerifierVerdict {
    do throws(ImagingError) {
        return .image(try Thumbnailer.validate(bytes, maxPixels: maxPixels))
    } catch {
        return VerifierVerdict(error)
    }
}

/// Feeds `bytes` to a `StreamingVerifier` in chunks whose sizes `nextSize` picks, then finishes.
func streamedVerdict(_ bytes: [UInt8], maxPixels: Int = Thumbnailer.defaultMaxPixels,
                     verifier: StreamingVerifier? = nil, nextSize: () -> Int) -> StreamedRun {
    let verifier = verifier ?? StreamingVerifier(maxPixels: maxPixels)
    var offset = 0
    do throws(ImagingError) {
        while offset < bytes.count {
            let size = max(1, min(nextSize(), bytes.count - offset))
            try verifier.feed(Array(bytes[offset..<(offset + size)]))
            offset += size
        }
    } catch {
        return StreamedRun(verdict: VerifierVerdict(error), refusedAfter: offset, error: WireErrorMapping.rpcError(for: error))
    }
    do throws(ImagingError) {
        return StreamedRun(verdict: .image(try verifier.finish()), refusedAfter: nil, error: nil)
    } catch {
        return StreamedRun(verdict: VerifierVerdict(error), refusedAfter: nil, error: WireErrorMapping.rpcError(for: error))
    }
}

/// Chunk sizes from 1 byte to 64 KiB, log-uniform (as many tiny chunks as large ones), from a
/// fixed seed so a failure reproduces.
struct ChunkSizes {
    private var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func next() -> Int {
        let bits = Int.random(in: 0...16, using: &random)
        return min(65_536, Int.random(in: (1 << bits)...(1 << bits) * 2 - 1, using: &random))
    }
}

/// Every JPEG and PNG of the corpus, as paths relative to its root.
func corpusImages() throws -> [String] {
    var paths: [String] = []
    for folder in ["jpeg", "png", "pngsuite"] {
        var pending = [folder]
        while let current = pending.popLast() {
            for path in try Corpus.files(in: current) {
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: Corpus.url(path).path, isDirectory: &isFolder), isFolder.boolValue {
                    pending.append(path)
                } else if path.hasSuffix(".jpg") || path.hasSuffix(".png") {
                    paths.append(path)
                }
            }
        }
    }
    return paths.sorted()
}
