import CPNGReader
import ImageCacheProtocol

/// The PNG half of `StreamingVerifier`: libpng's progressive reader (`CPNGReader`'s stream,
/// with the pull reader's error handling, limits and output layout), keeping no row.
///
/// The verdict is `PNGDecoder.validate`'s. Every row of every pass must decode, and the IDAT
/// chunk the last row ends in must be whole: both readers finish it, CRC included. What
/// follows it (the end of a zlib stream in a later IDAT chunk, more IDAT data after the
/// stream's end, a mangled ancillary chunk, a missing IEND) is not needed for any pixel: it is
/// not given to libpng here, and the pull reader stops before the next chunk's header. To know
/// which chunk the last row ends in, libpng is fed chunk by chunk (each piece of a body's
/// bytes lies in one PNG chunk).
///
/// Before the image data, libpng is not given the ancillary chunks the pull reader skips
/// unread (`handlingBeforeImageData`): its progressive reader buffers a chunk whole before it
/// looks at it, growing (and copying) that buffer as the bytes arrive, so a large text chunk
/// cost time quadratic in its size and memory up to its size; the verdict never depended on
/// those chunks. From the first image data chunk on, every chunk is given to libpng, as the
/// pull reader reads every one of them there.
///
/// An IDAT chunk's data is given in the pull reader's reads (`PNGImageDataReads`), whatever
/// pieces the body arrived in: where a damaged zlib stream after the last row is met, in the
/// inflate call that completes that row (an error) or later (a warning), depends on them.
final class StreamingPNGVerifier: StreamingFormatVerifier {
    private let stream: OpaquePointer
    private var chunks = PNGChunkTracker()
    /// The end of the IDAT chunk the last row ended in, once the rows are complete.
    private var imageEnd: Int?
    /// Whether the chunk now arriving is kept from libpng.
    private var skipping = false
    /// Whether an IDAT chunk has begun.
    private var sawImageData = false
    /// The IDAT chunk now arriving, regrouped into the pull reader's reads.
    private var imageDataReads: PNGImageDataReads?
    /// Chunk headers seen (IHDR must be the first).
    private var chunksSeen = 0
    /// Decode memory, decided from IHDR before libpng allocates anything.
    let memoryCost: Int?

    init(header: ImageHeader, bitDepth: Int?) throws(ImagingError) {
        guard let stream = ic_png_stream_create() else {
            throw ImagingError.library("libpng could not allocate a reader")
        }
        self.stream = stream
        // Rows only (no band, no picture): at most 4 channels out, libpng's two source rows.
        // Plus one read of image data gathered across pieces of the body.
        memoryCost = DecodeCost.pngDecode(width: header.storedWidth, height: 1, channels: 4,
                                          bitDepth: bitDepth ?? 16, interlaced: false)
            .addingClamped(DecodeCost.fixedOverhead).addingClamped(PNGImageDataReads.readSize)
    }

    deinit { ic_png_stream_destroy(stream) }

    func feed(_ bytes: UnsafeRawBufferPointer) throws(ImagingError) {
        var offset = 0
        while offset < bytes.count {
            let size = min(bytes.count - offset, chunks.bytesToBoundary)
            let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)])
            offset += size
            let inHeader = chunks.atChunkHeader
            let completed = chunks.consume(piece)
            if let imageEnd, chunks.count - size >= imageEnd { continue } // after the image data
            guard inHeader else {
                if skipping { continue }
                if imageDataReads != nil {
                    try imageDataReads?.pass(piece) { (read) throws(ImagingError) in try give(read) }
                } else {
                    try give(piece)
                }
                continue
            }
            // A header's bytes go to libpng once the header is whole (the tracker holds them
            // until then): its type and length decide whether libpng sees the chunk.
            guard let completed else { continue }
            skipping = false
            if !sawImageData {
                switch Self.handlingBeforeImageData(completed, first: chunksSeen == 0) {
                case .give: break
                case .skip: skipping = true
                case .refuse(let reason): throw ImagingError.decodeFailed("PNG: \(reason)", format: .png)
                }
            }
            chunksSeen += 1
            let isImageData = completed.type == PNGChunkHeader.imageData
            if isImageData { sawImageData = true }
            imageDataReads = isImageData && !skipping ? PNGImageDataReads(length: completed.length) : nil
            if !skipping {
                let fed = completed.bytes.withUnsafeBytes { ic_png_stream_feed(stream, $0.baseAddress, $0.count) }
                try settle(fed)
            }
        }
    }

    /// Gives libpng the next bytes it is to see.
    private func give(_ bytes: UnsafeRawBufferPointer) throws(ImagingError) {
        try settle(ic_png_stream_feed(stream, bytes.baseAddress, bytes.count))
    }

    /// What a feed's result means: its error, or the end of the image data once every row came.
    private func settle(_ fed: Int32) throws(ImagingError) {
        guard fed != 0 else {
            let message = String(cString: ic_png_stream_message(stream))
            throw ImagingError.decodeFailed("PNG: \(message.isEmpty ? "not decodable" : message)", format: .png)
        }
        if imageEnd == nil && ic_png_stream_rows_complete(stream) != 0 {
            imageEnd = chunks.currentChunkEnd
        }
    }

    /// What becomes of a chunk before the image data.
    enum ChunkHandling: Equatable {
        /// libpng reads it.
        case give
        /// Kept from libpng: the pull reader skips it unread.
        case skip
        /// The body is refused here, as the pull reader refuses it at this chunk.
        case refuse(String)
    }

    /// What becomes of a chunk before the first IDAT, decided from its header alone, so that
    /// libpng's progressive reader never buffers a chunk whose length the pull reader ignores
    /// (it would grow and copy that buffer as the bytes arrive):
    /// - skipped: every valid ancillary chunk but a `tRNS` that can be one (at most 256 bytes).
    ///   The pull reader skips them unread, or (gAMA, cHRM, sRGB, iCCP) reads them for the
    ///   colour conversion, where libpng 1.6 reports every fault as a warning: none of them
    ///   can make a row fail, so the verdict does not depend on them;
    /// - refused: a second IHDR, an IEND, an unknown critical chunk, and a `PLTE` longer than
    ///   any palette (768 bytes): the pull reader refuses all of them (the last in `ic_read`);
    /// - given to libpng: everything else, including a chunk with an invalid name or a length
    ///   past 2³¹ − 1, which libpng refuses from its header in both readers.
    static func handlingBeforeImageData(_ header: PNGChunkHeader, first: Bool) -> ChunkHandling {
        guard header.hasValidName, header.length <= 0x7FFF_FFFF else { return .give }
        if header.isAncillary {
            return header.type == PNGChunkHeader.transparency && header.length <= 256 ? .give : .skip
        }
        switch header.type {
        case PNGChunkHeader.imageData: return .give
        case PNGChunkHeader.palette: return header.length <= 768 ? .give : .refuse("PLTE: invalid")
        case PNGChunkHeader.header: return first ? .give : .refuse("IHDR: out of place")
        case PNGChunkHeader.end: return .refuse("IEND: out of place")
        default: return .refuse("unknown critical chunk")
        }
    }

    func finish() throws(ImagingError) {
        guard let imageEnd else {
            throw ImagingError.decodeFailed(
                "PNG: truncated (\(ic_png_stream_rows_seen(stream)) rows of the image data decoded before the body ended)",
                format: .png)
        }
        guard chunks.count >= imageEnd else {
            throw ImagingError.decodeFailed("PNG: truncated (the body ends inside the last image data chunk)", format: .png)
        }
    }
}

/// Where a PNG body's chunks start and end, as it arrives.
struct PNGChunkTracker {
    /// Bytes seen.
    private(set) var count = 0
    /// Offset of the next chunk's header (after the 8-byte signature, then chunk by chunk).
    private var nextChunk = 8
    /// The header bytes of the chunk at `nextChunk`, while they arrive.
    private var header: [UInt8] = []

    /// The end (after its CRC) of the chunk the last byte seen belongs to.
    var currentChunkEnd: Int { count > nextChunk ? count : nextChunk }

    /// Whether the next byte belongs to a chunk's header (its length and type).
    var atChunkHeader: Bool { count >= nextChunk }

    /// How many bytes, from the next one, still lie in the current chunk (or in the signature,
    /// or in the next chunk's length and type, which decide where that chunk ends).
    var bytesToBoundary: Int {
        count < nextChunk ? nextChunk - count : 8 - header.count
    }

    /// Takes the body's next bytes; returns the last chunk header they completed, if any.
    @discardableResult
    mutating func consume(_ bytes: UnsafeRawBufferPointer) -> PNGChunkHeader? {
        let origin = count
        count += bytes.count
        var completed: PNGChunkHeader?
        while nextChunk < count {
            let from = max(nextChunk + header.count, origin)
            let take = min(8 - header.count, count - from)
            guard take > 0 else { break }
            header.append(contentsOf: bytes[(from - origin)..<(from - origin + take)])
            guard header.count == 8 else { break }
            let chunk = PNGChunkHeader(header)
            nextChunk = nextChunk.addingClamped(12).addingClamped(chunk.length)
            header.removeAll(keepingCapacity: true)
            completed = chunk
        }
        return completed
    }
}

/// A PNG chunk's header: its data length and its type (four bytes, big-endian).
struct PNGChunkHeader: Equatable {
    var length: Int
    var type: UInt32

    static let header: UInt32 = 0x4948_4452 // IHDR
    static let imageData: UInt32 = 0x4944_4154 // IDAT
    static let palette: UInt32 = 0x504C_5445 // PLTE
    static let end: UInt32 = 0x4945_4E44 // IEND
    static let transparency: UInt32 = 0x7452_4E53 // tRNS

    /// From the header's 8 bytes.
    init(_ bytes: [UInt8]) {
        length = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        type = UInt32(bytes[4]) << 24 | UInt32(bytes[5]) << 16 | UInt32(bytes[6]) << 8 | UInt32(bytes[7])
    }

    /// The header's 8 bytes, as they came.
    var bytes: [UInt8] {
        [UInt8(truncatingIfNeeded: length >> 24), UInt8(truncatingIfNeeded: length >> 16),
         UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length),
         UInt8(truncatingIfNeeded: type >> 24), UInt8(truncatingIfNeeded: type >> 16),
         UInt8(truncatingIfNeeded: type >> 8), UInt8(truncatingIfNeeded: type)]
    }

    /// Four ASCII letters, as the PNG specification requires (libpng refuses anything else).
    var hasValidName: Bool {
        (0..<4).allSatisfy { shift in
            let byte = UInt8(truncatingIfNeeded: type >> (8 * UInt32(shift)))
            return (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
    }

    /// The first letter in lower case: a chunk a decoder may skip (PNG's "ancillary" bit).
    var isAncillary: Bool { type & 0x2000_0000 != 0 }
}
