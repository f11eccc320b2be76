import CPNGReader
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport
@testable import ImageCacheKit

/// libpng's heap is capped per reader (`IC_PNG_METADATA_HEAP` plus two rows), and the chunks
/// neither reader uses are skipped unread: a chunk's declared length never decides an
/// allocation. Before, a 57-byte file declaring a 1 GiB tEXt chunk made libpng allocate and
/// zero 1 GiB (its size check is a "benign" error, a warning while reading), and the
/// progressive reader buffered a large text chunk whole, growing and copying its buffer as the
/// bytes arrived.
@Suite(.timeLimit(.minutes(1))) struct PNGChunkBudgetTests {
    /// The most libpng's heap held while the pull reader read the header chunks, and whether
    /// it read them.
    private func headerRead(_ bytes: [UInt8]) -> (read: Bool, peak: Int) {
        bytes.withUnsafeBytes { raw in
            guard let reader = ic_png_reader_create(raw.baseAddress, raw.count) else { return (false, 0) }
            defer { ic_png_reader_destroy(reader) }
            var info = ic_png_info()
            let read = ic_png_read_info(reader, &info) != 0
            return (read, ic_png_reader_peak_heap(reader))
        }
    }

    @Test("a chunk that declares 1 GiB in a 57-byte file is never allocated: refused, libpng's heap stays small")
    func declaredLengthIsNeverAllocated() throws {
        let names = ["tEXt", "zTXt", "iTXt", "sPLT", "pCAL", "sCAL", "bKGD", "cHRM", "gAMA", "hIST", "iCCP", "oFFs",
                     "pHYs", "sBIT", "sRGB", "sTER", "tIME", "tRNS", "eXIf", "IDAT"]
        var checked = 0
        for path in try Corpus.files(in: "png/libpng-crashers") where names.contains(where: { path.hasSuffix("huge_\($0)_chunk.png") || path.hasSuffix("huge_\($0).png") }) {
            let bytes = try Corpus.bytes(path)
            let (read, peak) = headerRead(bytes)
            // An IDAT ends the header chunks: its length is judged when the rows are read.
            #expect(!read || path.hasSuffix("huge_IDAT.png"), "\(path)")
            #expect(peak < 1 << 20, "\(path): libpng's heap reached \(peak) bytes")
            let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(bytes) }
            #expect(error?.data.format == "png", "\(path)")
            #expect(streamedVerdict(bytes) { 7 }.verdict == .refused(.decodeFailed, format: "png"), "\(path)")
            checked += 1
        }
        #expect(checked >= 10)
    }

    /// A real PNG with a 12 MiB text chunk (more than libpng's heap may hold, and more than
    /// libpng's own 8 MB chunk limit) between its header and its image data.
    private func pngWithLargeText() throws -> (bytes: [UInt8], width: Int, height: Int) {
        var chunks = try #require(PNGChunks(parsing: SyntheticImages.png(width: 64, height: 48)))
        let text = Array("Comment".utf8) + [0] + [UInt8](repeating: 0x41, count: 12 << 20)
        chunks.insert(PNGChunks.Chunk("tEXt", text), before: "IDAT")
        return (chunks.bytes, 64, 48)
    }

    @Test("a 12 MiB text chunk before the image data is skipped unread: the image is accepted, libpng's heap stays small")
    func largeTextChunkIsSkipped() throws {
        let png = try pngWithLargeText()
        let (read, peak) = headerRead(png.bytes)
        #expect(read)
        #expect(peak < 1 << 20, "libpng's heap reached \(peak) bytes")
        let header = try Thumbnailer.validate(png.bytes)
        #expect((header.width, header.height) == (png.width, png.height))
        // The progressive reader is never given the chunk: fed in small pieces, it reaches the
        // same verdict (it buffered the chunk whole before, copying it as it grew).
        #expect(streamedVerdict(png.bytes) { 4096 }.verdict == wholeFileVerdict(png.bytes))
        #expect(streamedVerdict(png.bytes) { 4096 }.verdict.isImage)
    }

    @Test("libpng's heap never passes its cap: the progressive reader fed a 12 MiB chunk whole fails, holding at most the cap")
    func heapCapHolds() throws {
        // Straight to the C stream, past the feeder that keeps such chunks from it: libpng's
        // progressive reader buffers a chunk whole, so the cap is what stops it.
        let png = try pngWithLargeText()
        guard let stream = ic_png_stream_create() else { Issue.record("no stream"); return }
        defer { ic_png_stream_destroy(stream) }
        var offset = 0, failed = false
        while offset < png.bytes.count, !failed {
            let size = min(1 << 20, png.bytes.count - offset)
            failed = png.bytes[offset..<(offset + size)].withUnsafeBytes { ic_png_stream_feed(stream, $0.baseAddress, $0.count) } == 0
            offset += size
        }
        #expect(failed)
        #expect(offset < png.bytes.count, "refused before the chunk's end")
        #expect(ic_png_stream_peak_heap(stream) <= Int(IC_PNG_METADATA_HEAP))
    }

    @Test("chunks the readers use keep working: an ICC profile still converts, transparency still gives alpha")
    func usedChunksAreStillRead() throws {
        // Adobe RGB's profile is read (the image is colour-tagged) and tRNS becomes alpha.
        let tagged = try ColourFixtures.bytes("adobe-rgb.png")
        tagged.withUnsafeBytes { raw in
            guard let reader = ic_png_reader_create(raw.baseAddress, raw.count) else { Issue.record("no reader"); return }
            defer { ic_png_reader_destroy(reader) }
            var info = ic_png_info()
            #expect(ic_png_read_info(reader, &info) != 0)
            #expect(info.colourTagged != 0)
            var colour = ic_png_colour()
            #expect(ic_png_reader_colour(reader, &colour) != 0)
            #expect(colour.icc != nil && colour.iccLength > 0)
        }
        let transparent = try Corpus.bytes("pngsuite/tbbn3p08.png")
        let image = try transparent.withUnsafeBytes { try PNGDecoder.decode($0) }
        #expect(image.channels == 4)
    }

    @Test("before the image data the stream gives libpng, skips or refuses each chunk as the pull reader treats it")
    func handlingRule() {
        func header(_ type: String, _ length: Int) -> PNGChunkHeader {
            let bytes = [UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
                + Array(type.utf8)
            return PNGChunkHeader(bytes)
        }
        func handling(_ type: String, _ length: Int, first: Bool = false) -> StreamingPNGVerifier.ChunkHandling {
            StreamingPNGVerifier.handlingBeforeImageData(header(type, length), first: first)
        }
        #expect(handling("tEXt", 10) == .skip)
        #expect(handling("iCCP", 3000) == .skip)
        #expect(handling("prVt", 1) == .skip)
        #expect(handling("tRNS", 257) == .skip)
        #expect(handling("tRNS", 256) == .give)
        #expect(handling("PLTE", 768) == .give)
        #expect(handling("PLTE", 771) == .refuse("PLTE: invalid"))
        #expect(handling("IHDR", 13, first: true) == .give)
        #expect(handling("IHDR", 13) == .refuse("IHDR: out of place"))
        #expect(handling("IEND", 0) == .refuse("IEND: out of place"))
        #expect(handling("XYZW", 4) == .refuse("unknown critical chunk"))
        #expect(handling("IDAT", 1 << 30) == .give)
        #expect(handling("zzZ1", 4) == .give, "an invalid name is libpng's to refuse")
        #expect(handling("tEXt", 0x8000_0000) == .give, "a length past 2³¹ − 1 is libpng's to refuse")
    }

    @Test("chunks both readers refuse before the image data, whatever their length: the same verdict")
    func refusedChunksAgree() throws {
        let plain = try #require(PNGChunks(parsing: SyntheticImages.png(width: 32, height: 24)))
        let cases: [(String, PNGChunks.Chunk)] = [
            ("an oversized PLTE in an RGB image", PNGChunks.Chunk("PLTE", [UInt8](repeating: 7, count: 3 * 300))),
            ("an unknown critical chunk", PNGChunks.Chunk("XYZW", [UInt8](repeating: 1, count: 9000))),
            ("an early IEND", PNGChunks.Chunk("IEND", [UInt8](repeating: 1, count: 50))),
            ("a second IHDR", PNGChunks.Chunk("IHDR", Array(plain.chunks[0].data))),
        ]
        for (label, chunk) in cases {
            var chunks = plain
            chunks.insert(chunk, before: "IDAT")
            let whole = wholeFileVerdict(chunks.bytes)
            #expect(whole == .refused(.decodeFailed, format: "png"), "\(label)")
            for size in [1, 13, 4096] {
                #expect(streamedVerdict(chunks.bytes) { size }.verdict == whole, "\(label), pieces of \(size)")
            }
        }
    }

}
