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
final class StreamingPNGVerifier {
    private let stream: OpaquePointer
    private var chunks = PNGChunkTracker()
    /// The end of the IDAT chunk the last row ended in, once the rows are complete.
    private var imageEnd: Int?
    /// Decode memory, decided from IHDR before libpng allocates anything.
    let memoryCost: Int

    init(header: ImageHeader, bitDepth: Int?) throws(ImagingError) {
        guard let stream = ic_png_stream_create() else {
            throw ImagingError.library("libpng could not allocate a reader")
        }
        self.stream = stream
        // Rows only (no band, no picture): at most 4 channels out, libpng's two source rows.
        memoryCost = DecodeCost.pngDecode(width: header.storedWidth, height: 1, channels: 4,
                                          bitDepth: bitDepth ?? 16, interlaced: false)
            .addingClamped(DecodeCost.fixedOverhead)
    }

    deinit { ic_png_stream_destroy(stream) }

    func feed(_ bytes: UnsafeRawBufferPointer) throws(ImagingError) {
        var offset = 0
        while offset < bytes.count {
            let size = min(bytes.count - offset, chunks.bytesToBoundary)
            let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)])
            offset += size
            chunks.consume(piece)
            if let imageEnd, chunks.count - size >= imageEnd { continue } // after the image data
            guard ic_png_stream_feed(stream, piece.baseAddress, piece.count) != 0 else {
                let message = String(cString: ic_png_stream_message(stream))
                throw ImagingError.decodeFailed("PNG: \(message.isEmpty ? "not decodable" : message)", format: .png)
            }
            if imageEnd == nil && ic_png_stream_rows_complete(stream) != 0 {
                imageEnd = chunks.currentChunkEnd
            }
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

    /// How many bytes, from the next one, still lie in the current chunk (or in the signature,
    /// or in the next chunk's length and type, which decide where that chunk ends).
    var bytesToBoundary: Int {
        count < nextChunk ? nextChunk - count : 8 - header.count
    }

    /// Takes the body's next bytes.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        let origin = count
        count += bytes.count
        while nextChunk < count {
            let from = max(nextChunk + header.count, origin)
            let take = min(8 - header.count, count - from)
            guard take > 0 else { break }
            header.append(contentsOf: bytes[(from - origin)..<(from - origin + take)])
            guard header.count == 8 else { break }
            let dataLength = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            nextChunk = nextChunk.addingClamped(12).addingClamped(dataLength)
            header.removeAll(keepingCapacity: true)
        }
    }
}
