/// Hostile images, built in the test from bytes: what the daemon must refuse or
/// budget from the header alone, before it decodes anything.
public enum HostileImages {
    /// A PNG that declares `width`×`height` at `bitDepth` with `colorType` (6: RGBA), Adam7
    /// when `interlaced` (libpng must then hold the whole picture), and carries `idat` as its
    /// image data (empty by default: the header is all a cost needs).
    public static func png(width: Int, height: Int, bitDepth: UInt8 = 16, colorType: UInt8 = 6,
                           interlaced: Bool = false, idat: [UInt8] = []) -> [UInt8] {
        var ihdr: [UInt8] = []
        ihdr += bigEndian32(width) + bigEndian32(height) + [bitDepth, colorType, 0, 0, interlaced ? 1 : 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", ihdr) + chunk("IDAT", idat) + chunk("IEND", [])
    }

    /// A progressive JPEG's markers: SOI, a SOF2 of `width`×`height` with `components` at
    /// 1×1 sampling, `scans` SOS segments (each naming one component, no entropy data) and EOI.
    public static func progressiveJPEGMarkers(width: Int, height: Int, components: Int, scans: Int) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        var sof: [UInt8] = [8] + bigEndian16(height) + bigEndian16(width) + [UInt8(components)]
        for id in 1...components { sof += [UInt8(id), 0x11, 0] }
        bytes += segment(0xC2, sof)
        for scan in 0..<scans {
            bytes += segment(0xDA, [1, UInt8(scan % components + 1), 0, 1, 63, 0])
        }
        return bytes + [0xFF, 0xD9]
    }

    /// `jpeg` with its last scan repeated until it has `total` scans: libjpeg decodes every
    /// one of them again (a scan bomb made from any real progressive JPEG).
    public static func repeatingLastScan(of jpeg: [UInt8], toTotal total: Int) -> [UInt8] {
        var sosOffsets: [Int] = []
        var index = 0
        while index + 1 < jpeg.count {
            if jpeg[index] == 0xFF && jpeg[index + 1] == 0xDA { sosOffsets.append(index) }
            index += 1
        }
        guard let last = sosOffsets.last, total > sosOffsets.count,
              let end = (last..<(jpeg.count - 1)).last(where: { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xD9 })
        else { return jpeg }
        let scan = jpeg[last..<end]
        var bytes = Array(jpeg[..<end])
        for _ in 0..<(total - sosOffsets.count) { bytes += scan }
        return bytes + jpeg[end...]
    }

    private static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, marker] + bigEndian16(payload.count + 2) + payload
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let kind = Array(type.utf8)
        return bigEndian32(data.count) + kind + data + bigEndian32(Int(PNGChunks.crc32(kind + data)))
    }

    private static func bigEndian32(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
         UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    private static func bigEndian16(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}
