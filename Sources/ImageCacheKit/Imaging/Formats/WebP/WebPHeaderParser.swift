/// Reads a WebP's dimensions and alpha flag from its VP8, VP8L or VP8X header before the body
/// completes, so the layout gets its size; `WebPDecoder` decodes it.
enum WebPHeaderParser {
    static let riff: [UInt8] = Array("RIFF".utf8)
    static let webp: [UInt8] = Array("WEBP".utf8)

    static func parse(_ reader: ByteReader) -> HeaderParseOutcome {
        guard reader.has(12, 8) else { return .needMore }
        let chunk = String(decoding: UnsafeRawBufferPointer(rebasing: reader.bytes[12..<16]), as: UTF8.self)
        let width: Int, height: Int, alpha: Bool
        switch chunk {
        case "VP8 ":
            guard reader.has(20, 10) else { return .needMore }
            guard reader.matches(23, [0x9D, 0x01, 0x2A]) else { return .failed("VP8 start code missing") }
            width = reader.u16le(26)! & 0x3FFF
            height = reader.u16le(28)! & 0x3FFF
            alpha = false
        case "VP8L":
            guard reader.has(20, 5) else { return .needMore }
            guard reader.u8(20) == 0x2F else { return .failed("VP8L signature missing") }
            let bits = reader.u32le(21)!
            width = (bits & 0x3FFF) + 1
            height = ((bits >> 14) & 0x3FFF) + 1
            alpha = (bits >> 28) & 1 == 1
        case "VP8X":
            guard reader.has(20, 10) else { return .needMore }
            alpha = reader.u8(20)! & 0x10 != 0
            width = reader.u24le(24)! + 1
            height = reader.u24le(27)! + 1
        default:
            return .failed("unknown WebP chunk \(chunk.debugDescription)")
        }
        guard width > 0, height > 0 else { return .failed("WebP declares an empty image") }
        return .header(ImageHeader(format: .webp, storedWidth: width, storedHeight: height,
                                   hasAlpha: alpha, components: alpha ? 4 : 3))
    }
}
