@testable import ImageCacheKit
import ImageCacheProtocol
import ImageCacheServer
import Testing

/// Runs `body`, expecting an error that the wire mapping makes an `RPCError` of `kind`;
/// returns that wire error for further checks (what a client would read).
@discardableResult
func expectRPCError(_ kind: ErrorKind, sourceLocation: SourceLocation = #_sourceLocation,
                    _ body: () throws -> Void) -> RPCError? {
    do {
        try body()
        Issue.record("expected \(kind.rawValue), got success", sourceLocation: sourceLocation)
    } catch {
        guard let wire = WireErrorMapping.mapped(error) as? RPCError else {
            Issue.record("expected an engine error, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(wire.kind == kind, "\(wire)", sourceLocation: sourceLocation)
        return wire
    }
    return nil
}

/// The decoded pixels of an encoded thumbnail (JPEG or PNG), for comparisons by pixel.
func decodePixels(_ bytes: [UInt8]) throws -> PixelBuffer {
    try bytes.withUnsafeBytes { raw in
        let header = try ImageHeaderProbe.header(ofComplete: raw)
        if header.format == .png { return try PNGDecoder.decode(raw) }
        return try JPEGDecoder.decode(raw, header: header, thumbnailWidth: header.storedWidth).pixels
    }
}

/// Mean absolute difference per sample of two buffers of the same geometry.
func meanAbsoluteDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
    precondition(a.width == b.width && a.height == b.height && a.channels == b.channels)
    var total = 0
    for index in 0..<a.pixels.count { total += abs(Int(a.pixels[index]) - Int(b.pixels[index])) }
    return Double(total) / Double(a.pixels.count)
}
