/// How much of an encoded image is not pixels, read from its structure without decoding:
/// what `DeliveredFileRules` needs to decide whether an original may reach a client as it is.
///
/// - JPEG: APPn and COM segments before the first scan (EXIF, ICC, XMP, comments, private
///   data), plus any bytes after the EOI marker;
/// - PNG: every ancillary chunk (lower-case first letter: text, ICC, EXIF, private chunks),
///   plus any bytes after IEND. Compressed chunks (zTXt, iTXt, iCCP) are flagged: their
///   inflated size, which is what a client pays, is unknown without inflating them (a 1 MB
///   zTXt can hold gigabytes);
/// - other formats: none is counted and the file is never intact, since clients get JPEG or
///   PNG: such a file is always re-encoded.
struct ImageMetadataCensus {
    /// Bytes of metadata, as listed above.
    var metadataBytes = 0
    /// Bytes of the embedded ICC profile (JPEG: reassembled; PNG: the compressed iCCP chunk).
    var iccProfileBytes = 0
    /// Whether a chunk holds compressed metadata (PNG zTXt, iTXt, iCCP).
    var hasCompressedMetadata = false
    /// Whether the image declares colours other than plain sRGB: an ICC profile (JPEG APP2,
    /// PNG iCCP), or PNG cHRM or gAMA without an sRGB chunk. Its pixels are then converted to
    /// sRGB, which a file passed through as it is would not be.
    var declaresColours: Bool { iccProfileBytes > 0 || (hasPNGColourChunks && !hasSRGBChunk) }
    /// Whether a PNG has a cHRM or gAMA chunk.
    var hasPNGColourChunks = false
    /// Whether a PNG has an sRGB chunk (which its cHRM and gAMA then only restate).
    var hasSRGBChunk = false
    /// Whether the container is whole: a JPEG ending in EOI, a PNG whose chunks run to IEND
    /// with every ancillary chunk's CRC right. A damaged trailer is decoded like browsers do,
    /// but never handed on as it is.
    var isIntact = false

    /// The census of a body in `format`, by its codec (`ImageCodec.metadataCensus`; each
    /// format's reader lives in its folder).
    init(_ bytes: UnsafeRawBufferPointer, format: ImageFormat) {
        self = format.codec.metadataCensus(ByteReader(bytes))
    }

    /// The census of a file never passed through as it is: not intact, so it is re-encoded.
    init() {}
}
