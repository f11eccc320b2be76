/// Reads a PNG's IHDR (the chunk the format requires first) and checks the chunk layout.
enum PNGHeaderParser {
    /// The 8-byte signature every PNG starts with.
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// Signature (8) + IHDR length/type (8) + 13 bytes of data + CRC (4).
    static let headerLength = 33
    static let ihdr: [UInt8] = Array("IHDR".utf8)
    static let iend: [UInt8] = Array("IEND".utf8)

    static func parse(_ reader: ByteReader) -> HeaderParseOutcome {
        guard reader.has(0, headerLength) else { return .needMore }
        guard reader.u32be(8) == 13, reader.matches(12, ihdr) else {
            return .failed("the first chunk is not a 13-byte IHDR")
        }
        let crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: reader.bytes[12..<29]))
        guard reader.u32be(29) == Int(crc) else { return .failed("IHDR: CRC error") }
        let width = reader.u32be(16)!, height = reader.u32be(20)!
        let depth = Int(reader.u8(24)!), colorType = Int(reader.u8(25)!)
        guard width > 0, height > 0, width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF else {
            return .failed("invalid IHDR size \(width)×\(height)")
        }
        let channels: Int
        switch (colorType, depth) {
        case (0, 1), (0, 2), (0, 4), (0, 8), (0, 16): channels = 1
        case (2, 8), (2, 16): channels = 3
        case (3, 1), (3, 2), (3, 4), (3, 8): channels = 3
        case (4, 8), (4, 16): channels = 2
        case (6, 8), (6, 16): channels = 4
        default: return .failed("invalid IHDR colour type \(colorType) with bit depth \(depth)")
        }
        guard reader.u8(26) == 0, reader.u8(27) == 0, (reader.u8(28) ?? 9) <= 1 else {
            return .failed("invalid IHDR compression, filter or interlace method")
        }
        return .header(ImageHeader(
            format: .png, storedWidth: width, storedHeight: height, orientation: .up,
            hasAlpha: colorType == 4 || colorType == 6, isProgressive: reader.u8(28) == 1,
            components: channels))
    }
}

/// The CRC-32 PNG uses (ISO 3309), table-driven: IHDR is checked in the probe so a damaged
/// header is refused before it reaches the layout.
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { index -> UInt32 in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
