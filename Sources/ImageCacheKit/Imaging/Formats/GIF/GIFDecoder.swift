import CGIF
import ImageCacheProtocol

/// Decodes a GIF's first frame with giflib's record-by-record reader, composed on the logical
/// screen as browsers show it: the frame at its offset, what it does not cover transparent
/// (browsers ignore the background colour), its transparent index (from the Graphics Control
/// Extension before it) transparent. Interlaced frames are put back in row order.
///
/// Bounds, decided before any pixel: the screen was checked against the pixel limit by the
/// caller (`ImageHeader.checkPixelLimit`), the frame is checked too (a frame may claim more than the
/// screen: it is clipped to it, but its rows are read, so its size is what costs); at most
/// `extensionLimit` extension blocks before the first frame (each walked sub-block by
/// sub-block; their total is bounded by the body). The rest of the file is never read.
///
/// Output: RGB when every screen pixel is opaque, RGBA (straight alpha) otherwise, so
/// transparency makes the thumbnail a PNG.
enum GIFDecoder {
    /// Extension blocks allowed before the first image (comments, application blocks, a
    /// control block): real files have a few.
    static let extensionLimit = 1024

    /// The source giflib reads from: a borrowed buffer and a position.
    private struct Source {
        var base: UnsafePointer<UInt8>
        var count: Int
        var position = 0
    }

    /// Decodes the first frame onto the `header`'s screen; `maxPixels` also bounds the frame.
    static func decode(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, maxPixels: Int) throws(ImagingError) -> PixelBuffer {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw failure("empty body") }
        var source = Source(base: base, count: bytes.count)
        return try withUnsafeMutablePointer(to: &source) { (pointer) throws(ImagingError) -> PixelBuffer in
            var error: Int32 = 0
            guard let gif = DGifOpen(pointer, readSource, &error) else { throw failure(message(error)) }
            defer { DGifCloseFile(gif, &error) }
            return try firstFrame(gif, header: header, maxPixels: maxPixels)
        }
    }

    /// giflib's read callback: copies up to `length` bytes from the buffer.
    private static let readSource: InputFunc = { gif, target, length in
        guard let gif, let target, length > 0,
              let source = gif.pointee.UserData?.assumingMemoryBound(to: Source.self) else { return 0 }
        let count = min(Int(length), source.pointee.count - source.pointee.position)
        guard count > 0 else { return 0 }
        target.update(from: source.pointee.base + source.pointee.position, count: count)
        source.pointee.position += count
        return Int32(count)
    }

    private static func firstFrame(_ gif: UnsafeMutablePointer<GifFileType>, header: ImageHeader,
                                   maxPixels: Int) throws(ImagingError) -> PixelBuffer {
        let screenWidth = Int(gif.pointee.SWidth), screenHeight = Int(gif.pointee.SHeight)
        guard screenWidth == header.storedWidth, screenHeight == header.storedHeight else {
            throw failure("giflib reads a \(screenWidth)×\(screenHeight) screen, the header \(header.storedWidth)×\(header.storedHeight)")
        }
        var transparentIndex: Int?
        var extensions = 0
        while true {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &record) == GIF_OK else { throw failure(message(gif.pointee.Error)) }
            switch record {
            case EXTENSION_RECORD_TYPE:
                extensions += 1
                guard extensions <= extensionLimit else {
                    throw failure("more than \(extensionLimit) extension blocks before the first frame")
                }
                var code: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetExtension(gif, &code, &block) == GIF_OK else { throw failure(message(gif.pointee.Error)) }
                if code == GRAPHICS_EXT_FUNC_CODE, let block {
                    var control = GraphicsControlBlock()
                    if DGifExtensionToGCB(Int(block[0]), block + 1, &control) == GIF_OK {
                        transparentIndex = control.TransparentColor >= 0 ? Int(control.TransparentColor) : nil
                    }
                }
                while block != nil {
                    guard DGifGetExtensionNext(gif, &block) == GIF_OK else { throw failure(message(gif.pointee.Error)) }
                }
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(gif) == GIF_OK else { throw failure(message(gif.pointee.Error)) }
                return try readFrame(gif, screenWidth: screenWidth, screenHeight: screenHeight,
                                     transparentIndex: transparentIndex, maxPixels: maxPixels)
            case TERMINATE_RECORD_TYPE:
                throw failure("the file ends before its first frame (no image)")
            default:
                throw failure("unknown record")
            }
        }
    }

    private static func readFrame(_ gif: UnsafeMutablePointer<GifFileType>, screenWidth: Int, screenHeight: Int,
                                  transparentIndex: Int?, maxPixels: Int) throws(ImagingError) -> PixelBuffer {
        let desc = gif.pointee.Image
        let left = Int(desc.Left), top = Int(desc.Top), width = Int(desc.Width), height = Int(desc.Height)
        guard width > 0, height > 0 else { throw failure("the first frame is empty (\(width)×\(height))") }
        if maxPixels > 0 && width * height > maxPixels {
            throw ImagingError.tooLarge(width: width, height: height, maxPixels: maxPixels)
        }
        guard let map = desc.ColorMap ?? gif.pointee.SColorMap, let colors = map.pointee.Colors else {
            throw failure("the first frame has no colour table")
        }
        let colorCount = Int(map.pointee.ColorCount)
        // Canvas starts transparent; alpha dropped at the end when nothing is.
        var canvas = [UInt8](repeating: 0, count: screenWidth * screenHeight * 4)
        var line = [GifPixelType](repeating: 0, count: width)
        let rows = desc.Interlace ? interlacedRows(height) : Array(0..<height)
        for row in rows {
            let ok = line.withUnsafeMutableBufferPointer { DGifGetLine(gif, $0.baseAddress, Int32(width)) }
            guard ok == GIF_OK else { throw failure(message(gif.pointee.Error)) }
            let y = top + row
            guard y < screenHeight else { continue }
            let visible = max(0, min(width, screenWidth - left))
            canvas.withUnsafeMutableBufferPointer { target in
                var offset = (y * screenWidth + left) * 4
                for x in 0..<visible {
                    let index = Int(line[x])
                    if index != transparentIndex {
                        if index < colorCount {
                            let color = colors[index]
                            target[offset] = color.Red; target[offset + 1] = color.Green; target[offset + 2] = color.Blue
                        }
                        target[offset + 3] = 255
                    }
                    offset += 4
                }
            }
        }
        let picture = PixelBuffer(width: screenWidth, height: screenHeight, channels: 4, pixels: canvas)
        return picture.hasTranslucentPixels ? picture : picture.droppingAlpha()
    }

    /// The order in which an interlaced frame's rows arrive: every 8th from 0, every 8th from
    /// 4, every 4th from 2, every 2nd from 1.
    static func interlacedRows(_ height: Int) -> [Int] {
        var rows: [Int] = []
        rows.reserveCapacity(height)
        for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
            rows += stride(from: start, to: height, by: step)
        }
        return rows
    }

    private static func message(_ code: Int32) -> String {
        GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
    }

    private static func failure(_ why: String) -> ImagingError {
        ImagingError.decodeFailed("GIF: \(why)", format: .gif)
    }
}
