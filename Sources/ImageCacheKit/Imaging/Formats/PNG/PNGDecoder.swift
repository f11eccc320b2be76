import CPNGReader
import ImageCacheProtocol

/// Decodes PNG bodies with libpng's classic reader (through `CPNGReader`, which keeps the
/// `setjmp` in C), row by row: a non-interlaced image feeds the resampler in bands, so a large
/// PNG never needs a full-size buffer, and validation reads every row
/// through one band. Adam7 images are read whole (their rows only exist after the last pass).
///
/// Validation means the pixels are right, as browsers judge them: every row must decode (a
/// body cut inside its image data fails with "read beyond end of data"), while what follows
/// the last row (a mangled ancillary chunk, a missing IEND) is not needed for any pixel and is
/// not read. Ancillary chunks other than tRNS, gAMA, cHRM, sRGB and iCCP (text, eXIf, private
/// chunks) are skipped unread, and libpng's heap is capped per reader (`IC_PNG_METADATA_HEAP`
/// plus two rows), so no length a chunk declares decides an allocation and no text chunk is
/// inflated; such chunks never reach a client either (`DeliveredFileRules`).
///
/// Output is 8-bit grey, RGB or RGBA (straight alpha), in sRGB: an iCCP profile, or cHRM
/// primaries (without an sRGB chunk) with gAMA, are converted through LittleCMS
/// (`ColourTransform`; an unusable one is taken as sRGB); otherwise gAMA alone is honoured by
/// libpng, and a file without gAMA/sRGB is sRGB at every bit depth, as Pillow, libvips and
/// browsers read it (libpng's simplified reader took 16-bit samples as linear light: 24–65/255
/// too bright). Validation converts nothing: it keeps no pixel.
enum PNGDecoder {
    /// Rows read at a time from a non-interlaced image (validation and streamed resizing);
    /// `DecodeCost` counts the same band.
    static let bandRows = 16

    /// Decodes the whole image at full size, in sRGB.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(ImagingError) -> PixelBuffer {
        try withReader(bytes) { (reader, info) throws(ImagingError) -> PixelBuffer in
            var image = try decode(reader: reader, info: info)
            colourTransform(reader, info)?.apply(&image.pixels, pixelCount: image.width * image.height)
            return image
        }
    }

    /// Decodes every row, keeping none: proof that the body is a whole picture.
    static func validate(_ bytes: UnsafeRawBufferPointer) throws(ImagingError) {
        try withReader(bytes) { (reader, info) throws(ImagingError) -> Void in
            let width = Int(info.width), height = Int(info.height), channels = Int(info.channels)
            if info.interlaced != 0 {
                _ = try decode(reader: reader, info: info)
                return
            }
            let band = min(height, bandRows)
            var rows = [UInt8](repeating: 0, count: band * width * channels)
            var y = 0
            while y < height {
                let count = min(band, height - y)
                try read(reader, into: &rows, rows: count, rowLength: width * channels, whole: false)
                y += count
            }
        }
    }

    /// Decodes and resizes to exactly `width`×`height` (each at most the source's), streaming
    /// the rows of a non-interlaced image into the resampler; converted to sRGB before scaling.
    static func decode(_ bytes: UnsafeRawBufferPointer, scaledTo width: Int, height: Int) throws(ImagingError) -> PixelBuffer {
        try withReader(bytes) { (reader, info) throws(ImagingError) -> PixelBuffer in
            let transform = colourTransform(reader, info)
            if info.interlaced != 0 {
                var image = try decode(reader: reader, info: info)
                transform?.apply(&image.pixels, pixelCount: image.width * image.height)
                return Resampler.resize(image, width: width, height: height)
            }
            let rowLength = Int(info.width) * Int(info.channels)
            return try Resampler.resize(streaming: Int(info.width), Int(info.height), channels: Int(info.channels),
                                        width: width, height: height) { (band: inout [UInt8], rows: Int) throws(ImagingError) in
                try read(reader, into: &band, rows: rows, rowLength: rowLength, whole: false)
                transform?.apply(&band, pixelCount: rows * Int(info.width))
            }
        }
    }

    /// The conversion to sRGB of an image that declares its colours (`ic_png_info.colourTagged`):
    /// through its iCCP profile, else its cHRM primaries and gAMA. nil for an untagged image
    /// (libpng already produced sRGB) and for a declaration LittleCMS cannot use, which is
    /// then taken as sRGB.
    private static func colourTransform(_ reader: OpaquePointer, _ info: ic_png_info) -> ColourTransform? {
        guard info.colourTagged != 0 else { return nil }
        var colour = ic_png_colour()
        guard ic_png_reader_colour(reader, &colour) != 0 else { return nil }
        let layout: ColourTransform.Layout = info.channels == 4 ? .rgba : (info.channels == 3 ? .rgb : .grey)
        if let icc = colour.icc, colour.iccLength > 0 {
            guard colour.iccLength <= ColourTransform.maxProfileBytes else { return nil }
            return ColourTransformCache.shared.transform(profile: Array(UnsafeBufferPointer(start: icc, count: colour.iccLength)),
                                                         layout: layout)
        }
        guard colour.hasPrimaries != 0 else { return nil }
        return ColourTransform(from: .primaries(white: (colour.whiteX, colour.whiteY), red: (colour.redX, colour.redY),
                                                green: (colour.greenX, colour.greenY), blue: (colour.blueX, colour.blueY),
                                                gamma: colour.gamma > 0 ? colour.gamma : nil),
                               layout: layout)
    }

    private static func decode(reader: OpaquePointer, info: ic_png_info) throws(ImagingError) -> PixelBuffer {
        let width = Int(info.width), height = Int(info.height), channels = Int(info.channels)
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        try read(reader, into: &pixels, rows: height, rowLength: width * channels, whole: true)
        return PixelBuffer(width: width, height: height, channels: channels, pixels: pixels)
    }

    /// Reads `rows` rows (or, with `whole`, the whole image, any interlacing) into `buffer`.
    private static func read(_ reader: OpaquePointer, into buffer: inout [UInt8], rows: Int, rowLength: Int,
                             whole: Bool) throws(ImagingError) {
        let ok = buffer.withUnsafeMutableBufferPointer { target in
            whole ? ic_png_read_image(reader, target.baseAddress, rowLength)
                : ic_png_read_rows(reader, target.baseAddress, UInt32(rows), rowLength)
        }
        guard ok != 0 else { throw failure(reader) }
    }

    /// Runs `body` with a reader whose header has been read.
    private static func withReader<T>(_ bytes: UnsafeRawBufferPointer,
                                      _ body: (OpaquePointer, ic_png_info) throws(ImagingError) -> T) throws(ImagingError) -> T {
        guard let base = bytes.baseAddress, let reader = ic_png_reader_create(base, bytes.count) else {
            throw ImagingError.decodeFailed("PNG: not decodable", format: .png)
        }
        defer { ic_png_reader_destroy(reader) }
        var info = ic_png_info()
        guard ic_png_read_info(reader, &info) != 0 else { throw failure(reader) }
        return try body(reader, info)
    }

    private static func failure(_ reader: OpaquePointer) -> ImagingError {
        let message = String(cString: ic_png_reader_message(reader))
        return ImagingError.decodeFailed("PNG: \(message.isEmpty ? "not decodable" : message)", format: .png)
    }
}
