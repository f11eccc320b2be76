/// Reads a JPEG's frame header (size, components, progressive) and EXIF orientation from
/// the markers before it, on a buffer that may end anywhere.
enum JPEGHeaderParser {
    enum Outcome {
        case header(ImageHeader, sofOffset: Int)
        case needMore
        case failed(String)
    }

    static func parse(_ reader: ByteReader) -> Outcome {
        var walker = JPEGMarkerWalker(reader)
        var orientation: Int?
        var exifSeen = false
        while true {
            guard case .segment(let segment) = walker.next() else { return .needMore }
            switch segment.marker {
            case 0xE1 where !exifSeen:
                let prefix = ExifOrientationReader.exifPrefix
                guard reader.has(segment.payload.lowerBound, min(prefix.count, segment.payload.count)) else {
                    return .needMore
                }
                guard reader.matches(segment.payload.lowerBound, prefix) else { continue }
                // The orientation may sit anywhere in IFD0, so the whole (≤ 64 KiB) segment is needed.
                guard reader.has(segment.payload.lowerBound, segment.payload.count) else { return .needMore }
                exifSeen = true
                let payload = UnsafeRawBufferPointer(rebasing: reader.bytes[segment.payload])
                orientation = ExifOrientationReader.orientation(inAPP1: ByteReader(payload))
            case let marker where JPEGMarkerWalker.isStartOfFrame(marker):
                let base = segment.payload.lowerBound
                guard segment.payload.count >= 6 else { return .failed("frame header too short") }
                guard let height = reader.u16be(base + 1), let width = reader.u16be(base + 3),
                      let components = reader.u8(base + 5) else { return .needMore }
                guard width > 0, height > 0 else {
                    return .failed("frame header declares an empty image (\(width)×\(height))")
                }
                guard (1...4).contains(components) else {
                    return .failed("frame header declares \(components) colour components")
                }
                let header = ImageHeader(
                    format: .jpeg, storedWidth: width, storedHeight: height,
                    orientation: ExifOrientation(tagValue: orientation ?? 1), hasAlpha: false,
                    isProgressive: JPEGMarkerWalker.isProgressive(marker), components: Int(components))
                return .header(header, sofOffset: segment.offset)
            case JPEGMarkerWalker.sos:
                return .failed("scan data before any frame header")
            case JPEGMarkerWalker.eoi:
                return .failed("end of image before any frame header")
            default:
                continue
            }
        }
    }
}
