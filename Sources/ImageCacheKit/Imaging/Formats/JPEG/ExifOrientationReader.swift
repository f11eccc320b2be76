/// Reads the Orientation tag from the payload of a JPEG APP1 "Exif" segment.
///
/// EXIF in the wild is often broken (bad TIFF headers, offsets past the end, loops), and a
/// broken EXIF block must never make a good picture fail: every problem yields nil, which
/// callers treat as "upright". Only IFD0 is read, since that is where the tag lives.
enum ExifOrientationReader {
    static let exifPrefix: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00] // "Exif\0\0"

    /// The raw tag value (which may be out of range), or nil when absent or unreadable.
    /// `payload` starts after the segment length, i.e. at "Exif\0\0".
    static func orientation(inAPP1 payload: ByteReader) -> Int? {
        guard payload.matches(0, exifPrefix) else { return nil }
        let tiff = 6
        let littleEndian: Bool
        switch (payload.u8(tiff), payload.u8(tiff + 1)) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        func u16(_ offset: Int) -> Int? {
            littleEndian ? payload.u16le(tiff + offset) : payload.u16be(tiff + offset)
        }
        func u32(_ offset: Int) -> Int? {
            littleEndian ? payload.u32le(tiff + offset) : payload.u32be(tiff + offset)
        }
        guard u16(2) == 42, let ifd0 = u32(4), ifd0 >= 8, let entries = u16(ifd0) else { return nil }
        // A real IFD0 has a few dozen entries; the cap bounds work on a lying count.
        for index in 0..<min(entries, 512) {
            let entry = ifd0 + 2 + index * 12
            guard let tag = u16(entry) else { return nil }
            guard tag == 0x0112 else { continue }
            guard let type = u16(entry + 2), let count = u32(entry + 4), count >= 1 else { return nil }
            switch type {
            case 3: return u16(entry + 8)                       // SHORT, the standard type
            case 4, 9: return u32(entry + 8)                    // LONG/SLONG, seen in the wild
            case 1, 6, 7: return payload.u8(tiff + entry + 8).map(Int.init) // BYTE-ish
            default: return nil
            }
        }
        return nil
    }
}
