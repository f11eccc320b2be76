/// What `DecodeCost` reads of a PNG's chunks before its image data (bit depth, interlacing,
/// transparency, colour declarations), without decoding.
extension PNGHeaderParser {
    /// IHDR's bit depth, or nil before the header has arrived (the probe has checked it).
    static func bitDepth(_ reader: ByteReader) -> Int? {
        reader.u8(24).map(Int.init)
    }

    /// Whether IHDR's interlace method is Adam7 (the byte after the filter method).
    static func isInterlaced(_ reader: ByteReader) -> Bool {
        reader.u8(28).map { $0 != 0 } ?? false
    }

    static let trns: [UInt8] = Array("tRNS".utf8)
    static let idat: [UInt8] = Array("IDAT".utf8)
    static let iccp: [UInt8] = Array("iCCP".utf8)
    static let chrm: [UInt8] = Array("cHRM".utf8)
    static let srgb: [UInt8] = Array("sRGB".utf8)

    /// Whether a tRNS chunk comes before the image data: libpng's simplified reader then
    /// adds an alpha channel, so the decode allocates 4 channels, not 3 or 1.
    static func hasTransparencyChunk(_ reader: ByteReader) -> Bool {
        chunksBeforeImageData(reader, [trns]).contains(trns)
    }

    /// What a PNG declares about its colours, as `PNGDecoder` will convert them.
    enum ColourDeclaration { case none, iccProfile, primaries }

    /// The declaration before the image data: an iCCP profile, or cHRM primaries without an
    /// sRGB chunk (the cases the reader hands to `ColourTransform`).
    static func colourDeclaration(_ reader: ByteReader) -> ColourDeclaration {
        let found = chunksBeforeImageData(reader, [iccp, chrm, srgb])
        if found.contains(iccp) { return .iccProfile }
        return found.contains(chrm) && !found.contains(srgb) ? .primaries : .none
    }

    /// Which of `types` occur among the chunks before the first IDAT.
    private static func chunksBeforeImageData(_ reader: ByteReader, _ types: [[UInt8]]) -> [[UInt8]] {
        var found: [[UInt8]] = []
        var offset = 8
        while let length = reader.u32be(offset), reader.has(offset + 4, 4) {
            if reader.matches(offset + 4, idat) { break }
            if let type = types.first(where: { reader.matches(offset + 4, $0) }), !found.contains(type) { found.append(type) }
            let (end, overflow) = offset.addingReportingOverflow(12 &+ length)
            guard !overflow, end > offset else { break }
            offset = end
        }
        return found
    }
}
