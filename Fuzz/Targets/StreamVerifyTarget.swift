import ImageCacheProtocol
@testable import ImageCacheKit

/// `stream-verify`: `StreamingVerifier` on arbitrary bytes, fed in chunks whose sizes the
/// input's length picks (1 byte to 64 KiB), against `Thumbnailer.validate` on the whole body.
///
/// Properties: a feed or `finish()` answers or throws `decode_failed`/`too_large`, never a
/// trap or a sanitizer report; the streaming verdict is validate's (the same header, or an
/// error of the same kind and sniffed format); a refusal during a feed is final (`finish()`
/// throws it again).
enum StreamVerifyTarget {
    static let target = FuzzTarget(name: "stream-verify", summary: "StreamingVerifier in chunks against Thumbnailer.validate",
                                   run: run)

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let body = Array(bytes)
        let whole: Result<ImageHeader, ImagingError> = Result { () throws(ImagingError) -> ImageHeader in
            try Thumbnailer.validate(body, maxPixels: ThumbnailTarget.maxPixels)
        }
        let verifier = StreamingVerifier(maxPixels: ThumbnailTarget.maxPixels)
        // Chunk sizes from a small generator seeded by the length: every size class is tried.
        var state = UInt64(body.count) &* 0x9E37_79B9_7F4A_7C15 | 1
        var offset = 0
        var refusal: ImagingError?
        while offset < body.count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            let sizeClass = 1 << Int(state % 17)
            let size = min(body.count - offset, sizeClass + Int(state >> 40) % sizeClass)
            do {
                try verifier.feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)]))
            } catch {
                refusal = error
                break
            }
            offset += size
        }
        let streamed: Result<ImageHeader, ImagingError> = Result { () throws(ImagingError) -> ImageHeader in try verifier.finish() }
        if let refusal {
            guard case .failure(let again) = streamed, again == refusal else {
                FuzzCheck.fail("refused by a feed (\(refusal)), then finish() said \(streamed)")
            }
        }
        switch (whole, streamed) {
        case (.success(let expected), .success(let header)):
            FuzzCheck.require(expected == header, "validate: \(expected); streamed: \(header)")
        case (.failure(let expected), .failure(let error)):
            ThumbnailTarget.expectImagingError(error, "StreamingVerifier")
            FuzzCheck.require(expected.kind == error.kind && expected.format == error.format,
                              "validate: \(expected); streamed: \(error)")
        default:
            FuzzCheck.fail("validate: \(whole); streamed: \(streamed)")
        }
    }
}
