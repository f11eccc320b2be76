/// Reads a GIF's logical screen (its dimensions) before the body completes, so the layout gets
/// its size; `GIFDecoder` decodes it.
enum GIFHeaderParser {
    static let gif87: [UInt8] = Array("GIF87a".utf8)
    static let gif89: [UInt8] = Array("GIF89a".utf8)

    static func parse(_ reader: ByteReader) -> HeaderParseOutcome {
        guard let width = reader.u16le(6), let height = reader.u16le(8) else { return .needMore }
        guard width > 0, height > 0 else { return .failed("GIF declares an empty screen \(width)×\(height)") }
        return .header(ImageHeader(format: .gif, storedWidth: width, storedHeight: height, components: 3))
    }
}
