extension ImageMetadataCensus {
    /// The census of a PNG: its ancillary chunks (CRC-checked), and what follows IEND.
    init(png reader: ByteReader) {
        self.init()
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
