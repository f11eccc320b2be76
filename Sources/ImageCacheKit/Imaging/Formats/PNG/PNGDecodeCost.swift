import ImageCacheProtocol

extension DecodeCost {
    /// A PNG decode by libpng's classic reader: one band of `PNGDecoder.bandRows` rows for a
    /// non-interlaced image (validation and streamed thumbnails alike), the whole picture for
    /// an interlaced one; plus libpng's current and previous source row (16-bit samples are
    /// scaled to 8 bits as the rows are read, so only these rows are 16-bit).
    static func pngDecode(width: Int, height: Int, channels: Int, bitDepth: Int, interlaced: Bool) -> Int {
        let rowBytes = width.multipliedClamped(by: channels)
        let rows = interlaced ? height : min(height, PNGDecoder.bandRows)
        let sourceRows = rowBytes.multipliedClamped(by: bitDepth == 16 ? 2 : 1).multipliedClamped(by: 2)
        return rowBytes.multipliedClamped(by: rows).addingClamped(sourceRows)
    }
}
