@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

/// The zlib stream's end (its Adler-32 checksum) right after a PNG's last row. libpng's pull
/// reader (`validate`) checks the checksum when it inflates it in the same call as the last
/// row's bytes, that is when both lie in one of its 8 KiB reads of the chunk; read later, a bad
/// one is only a warning. The streaming verifier gives libpng's progressive reader the same
/// reads, so the verdict does not depend on how the body arrived.
@Suite("Streaming verification: the zlib checksum after a PNG's last row", .timeLimit(.minutes(1)))
struct StreamingPNGChecksumTests {
    /// An 8-bit grey PNG whose rows are stored uncompressed in one IDAT chunk, its Adler-32
    /// checksum inverted.
    static func badChecksumPNG(width: Int, height: Int) -> [UInt8] {
        var rows: [UInt8] = []
        for y in 0..<height {
            rows.append(0) // filter: none
            for x in 0..<width { rows.append(UInt8((x * 3 + y * 11) & 0xFF)) }
        }
        var zlib = PNGChunks.storedZlib(rows)
        zlib[zlib.count - 1] ^= 0xFF
        let header = PNGChunks.bigEndian(UInt32(width)) + PNGChunks.bigEndian(UInt32(height)) + [8, 0, 0, 0, 0]
        return PNGChunks([PNGChunks.Chunk("IHDR", header), PNGChunks.Chunk("IDAT", zlib), PNGChunks.Chunk("IEND", [])]).bytes
    }

    /// The verdict fed in chunks of 1 to 8 bytes, of 64, 4096 and 8200, and whole.
    private static func streamedVerdicts(_ bytes: [UInt8]) -> [Int: VerifierVerdict] {
        var verdicts: [Int: VerifierVerdict] = [:]
        for chunk in Array(1...8) + [64, 4096, 8200, bytes.count] {
            verdicts[chunk] = streamedVerdict(bytes) { chunk }.verdict
        }
        return verdicts
    }

    /// The bodies, each with the verdict `validate` gives it.
    enum Body: String, CaseIterable, Sendable {
        /// libpng's own `badadler.png` (1×1): refused.
        case libpngBadAdler
        /// 32×32 in one small chunk: the checksum lies in the last row's read; refused.
        case checksumInTheLastRowsRead
        /// 1 636 × 5 grey: 5 rows of 1 637 bytes after the zlib and block headers (7 bytes)
        /// end the stream's first 8 192 bytes exactly, so the checksum arrives in libpng's next
        /// read: it costs no pixel, accepted.
        case checksumInALaterRead

        var bytes: [UInt8] {
            get throws {
                switch self {
                case .libpngBadAdler: try Corpus.bytes("png/libpng-crashers/badadler.png")
                case .checksumInTheLastRowsRead: StreamingPNGChecksumTests.badChecksumPNG(width: 32, height: 32)
                case .checksumInALaterRead: StreamingPNGChecksumTests.badChecksumPNG(width: 1636, height: 5)
                }
            }
        }

        var expected: VerifierVerdict {
            switch self {
            case .libpngBadAdler, .checksumInTheLastRowsRead: .refused(.decodeFailed, format: "png")
            case .checksumInALaterRead:
                .image(ImageHeader(format: .png, storedWidth: 1636, storedHeight: 5, orientation: .up,
                                   hasAlpha: false, isProgressive: false, components: 1))
            }
        }
    }

    @Test("validate's verdict, and the same verdict however the body arrives (one byte at a time included)",
          arguments: Body.allCases)
    func sameVerdictHoweverItArrives(_ body: Body) throws {
        let bytes = try body.bytes
        let whole = wholeFileVerdict(bytes)
        #expect(whole == body.expected)
        for (chunk, verdict) in Self.streamedVerdicts(bytes) {
            #expect(verdict == whole, "chunks of \(chunk): \(verdict)")
        }
    }
}
