@testable import ImageCacheKit

/// `gif`, `webp`, `avif`: the thumbnail target's properties, on inputs that sniff
/// as one format only, so that each decoder (giflib, libwebp, libavif and the AVIF box
/// walk) gets the whole run rather than the mutations that stay in its format by chance.
/// Seeded from `Fuzz/seeds/<format>` (the test fixtures and hostile headers).
enum FormatTargets {
    static let targets = [ImageFormat.gif, .webp, .avif].map { format in
        FuzzTarget(name: format.rawValue, summary: "Thumbnailer on \(format.rawValue.uppercased()) bodies (1 MP limit)") { bytes in
            guard case .format(format) = ImageFormat.sniff(ByteReader(bytes)) else { return }
            ThumbnailTarget.run(bytes)
        }
    }
}
