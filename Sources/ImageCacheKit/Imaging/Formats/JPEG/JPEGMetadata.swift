/// What a JPEG's markers before its first scan say beyond its size: the Adobe APP14 marker
/// (which means CMYK is stored inverted) and the embedded ICC profile (APP2, possibly split
/// across several segments), plus where the first scan starts.
struct JPEGMetadata {
    var hasAdobeMarker = false
    /// The reassembled ICC profile, or nil when absent or its chunks are inconsistent.
    var iccProfile: [UInt8]?
    /// Offset of the first SOS marker, or nil when the walk ended before one.
    var firstScanOffset: Int?
    /// Bytes of APPn and COM segments (EXIF, ICC, XMP, comments, private data) before the
    /// first scan, markers and length fields included: what `DeliveredFileRules` caps.
    var metadataBytes = 0

    static let iccSignature: [UInt8] = Array("ICC_PROFILE".utf8) + [0]
    static let adobeSignature: [UInt8] = Array("Adobe".utf8)

    /// Walks the markers of a complete body up to the first scan.
    init(_ reader: ByteReader) {
        var walker = JPEGMarkerWalker(reader)
        var chunks: [Int: Range<Int>] = [:]
        var declaredCount: Int?
        var consistent = true
        walk: while case .segment(let segment) = walker.next() {
            let payload = segment.payload
            if (0xE0...0xEF).contains(segment.marker) || segment.marker == 0xFE {
                metadataBytes += payload.upperBound - segment.offset
            }
            guard reader.has(payload.lowerBound, payload.count) else { break }
            switch segment.marker {
            case 0xEE where reader.matches(payload.lowerBound, Self.adobeSignature):
                hasAdobeMarker = true
            case 0xE2 where payload.count > 14 && reader.matches(payload.lowerBound, Self.iccSignature):
                let sequence = Int(reader.u8(payload.lowerBound + 12)!)
                let count = Int(reader.u8(payload.lowerBound + 13)!)
                if declaredCount == nil { declaredCount = count }
                if count != declaredCount || sequence < 1 || sequence > count || chunks[sequence] != nil {
                    consistent = false
                }
                chunks[sequence] = (payload.lowerBound + 14)..<payload.upperBound
            case JPEGMarkerWalker.sos:
                firstScanOffset = segment.offset
                break walk
            case JPEGMarkerWalker.eoi:
                break walk
            default:
                continue
            }
        }
        if consistent, let count = declaredCount, chunks.count == count {
            var profile: [UInt8] = []
            for sequence in 1...count { profile += reader.bytes[chunks[sequence]!] }
            iccProfile = profile
        }
    }

    /// Whether an EOI marker follows the first scan: a body without one was cut short.
    ///
    /// Entropy-coded data escapes every 0xFF, so an FF D9 after the first scan is a real
    /// marker; searching from the end finds it at once in the usual case and tolerates
    /// trailing bytes some cameras and servers append.
    static func hasEndOfImage(_ reader: ByteReader, after scanOffset: Int) -> Bool {
        endOfImageOffset(reader, after: scanOffset) != nil
    }

    /// Offset of the last EOI marker after the first scan (bytes after it are a trailer).
    static func endOfImageOffset(_ reader: ByteReader, after scanOffset: Int) -> Int? {
        var index = reader.count - 2
        while index > scanOffset {
            if reader.bytes[index] == 0xFF && reader.bytes[index + 1] == 0xD9 { return index }
            index -= 1
        }
        return nil
    }
}
