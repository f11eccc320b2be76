/// How much of an encoded image is not pixels, read from its structure without decoding:
/// what `DeliveredFileRules` needs to decide whether an original may reach a client as it is.
///
/// - JPEG: APPn and COM segments before the first scan (EXIF, ICC, XMP, comments, private
///   data), plus any bytes after the EOI marker;
/// - PNG: every ancillary chunk (lower-case first letter: text, ICC, EXIF, private chunks),
///   plus any bytes after IEND. Compressed chunks (zTXt, iTXt, iCCP) are flagged: their
///   inflated size, which is what a client pays, is unknown without inflating them (a 1 MB
///   zTXt can hold gigabytes).
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
    private var hasPNGColourChunks = false
    private var hasSRGBChunk = false
    /// Whether the container is whole: a JPEG ending in EOI, a PNG whose chunks run to IEND
    /// with every ancillary chunk's CRC right. A damaged trailer is decoded like browsers do,
    /// but never handed on as it is.
    var isIntact = false

    init(_ bytes: UnsafeRawBufferPointer, format: ImageFormat) {
        let reader = ByteReader(bytes)
        switch format {
        case .jpeg: readJPEG(reader)
        case .png: readPNG(reader)
        case .gif, .webp, .avif: break  // never intact: clients get JPEG or PNG, so they are re-encoded
        }
    }

    private mutating func readJPEG(_ reader: ByteReader) {
        let metadata = JPEGMetadata(reader)
        metadataBytes = metadata.metadataBytes
        iccProfileBytes = metadata.iccProfile?.count ?? 0
        guard let scan = metadata.firstScanOffset,
              let end = JPEGMetadata.endOfImageOffset(reader, after: scan) else { return }
        isIntact = true
        metadataBytes += reader.count - (end + 2)
    }

    private mutating func readPNG(_ reader: ByteReader) {
        var offset = 8
        while let length = reader.u32be(offset) {
            guard length <= reader.count, reader.has(offset, 12 + length) else { break }
            let type = offset + 4
            if reader.matches(type, PNGHeaderParser.iend) {
                isIntact = true
                metadataBytes += reader.count - (offset + 12)
                return
            }
            if let first = reader.u8(type), first & 0x20 != 0 { // ancillary
                metadataBytes += 12 + length
                // A mangled ancillary chunk (libpng drops it, Pillow refuses the file) is a
                // damaged container; checked only while the metadata is within the cap, past
                // which the file is re-encoded anyway.
                if metadataBytes <= DeliveredFileRules.maxMetadataBytes,
                   reader.u32be(offset + 8 + length) != Int(CRC32.checksum(UnsafeRawBufferPointer(
                       rebasing: reader.bytes[type..<(type + 4 + length)]))) {
                    return
                }
                if reader.matches(type, Self.zTXt) || reader.matches(type, Self.iTXt) {
                    hasCompressedMetadata = true
                } else if reader.matches(type, Self.iCCP) {
                    hasCompressedMetadata = true
                    iccProfileBytes = max(1, length)
                } else if reader.matches(type, Self.cHRM) || reader.matches(type, Self.gAMA) {
                    hasPNGColourChunks = true
                } else if reader.matches(type, Self.sRGB) {
                    hasSRGBChunk = true
                }
            }
            offset += 12 + length
        }
        // The chunks stop short of IEND: the rest is a damaged trailer (or the image data is cut,
        // which the decode refuses).
        metadataBytes += max(0, reader.count - offset)
    }

    private static let zTXt: [UInt8] = Array("zTXt".utf8)
    private static let iTXt: [UInt8] = Array("iTXt".utf8)
    private static let iCCP: [UInt8] = Array("iCCP".utf8)
    private static let cHRM: [UInt8] = Array("cHRM".utf8)
    private static let gAMA: [UInt8] = Array("gAMA".utf8)
    private static let sRGB: [UInt8] = Array("sRGB".utf8)
}
