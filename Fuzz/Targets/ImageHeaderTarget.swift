import ImageCacheProtocol
@testable import ImageCacheKit

/// `image-header`: the sniffer (`ImageFormat.sniff`) and the header probe
/// (`ImageHeaderProbe.probe`) on any bytes, whole and cut short, as chunks arrive.
///
/// Properties: the probe answers a header, "need more" or `decode_failed`, never a trap; a
/// header has the sniffed format and positive dimensions; a header found in a prefix is the
/// header of the whole body (nothing after it was needed); a prefix the probe refuses is
/// refused whole too.
enum ImageHeaderTarget {
    static let target = FuzzTarget(name: "image-header", summary: "ImageFormat.sniff and ImageHeaderProbe, whole and by prefix", run: run)

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let sniffed = ImageFormat.sniff(Array(bytes))
        let whole = probe(bytes)
        if case .success(.header(let header)) = whole {
            FuzzCheck.require(header.format == sniffed, "header format \(header.format), sniffed \(String(describing: sniffed))")
            FuzzCheck.require(header.storedWidth > 0 && header.storedHeight > 0, "a header without pixels: \(header)")
            _ = try? header.checkPixelLimit(Thumbnailer.defaultMaxPixels)
        }
        // A few cuts: every length up to 32, then a handful spread over the body.
        var cuts = Set(0..<min(bytes.count, 32))
        for step in 1..<8 { cuts.insert(bytes.count * step / 8) }
        for cut in cuts where cut < bytes.count {
            let part = probe(UnsafeRawBufferPointer(rebasing: bytes[0..<cut]))
            switch part {
            case .success(.header(let header)):
                FuzzCheck.require(whole == .success(.header(header)),
                                  "prefix of \(cut) bytes: \(header); whole: \(whole)")
            case .failure(let error):
                guard case .failure = whole else {
                    FuzzCheck.fail("prefix of \(cut) bytes refused (\(error)); whole: \(whole)")
                }
            case .success(.needMore):
                break
            }
        }
    }

    /// The probe's answer; its errors must be `decode_failed`.
    static func probe(_ bytes: UnsafeRawBufferPointer) -> Result<ProbeResult, ImagingError> {
        do {
            return .success(try ImageHeaderProbe.probe(bytes))
        } catch {
            FuzzCheck.require(error.kind == .decodeFailed, "the probe threw \(error)")
            return .failure(error)
        }
    }
}
