/// The format to ask an image CDN for when it transcodes on request (Unsplash's imgix `fm=`):
/// `[providers.unsplash] image_format`.
///
/// The daemon decodes all of them and always writes JPEG or PNG thumbnails, so this only
/// changes the bytes fetched per thumbnail. `auto` asks for WebP: at the `q=80` the daemon
/// sends and thumbnail widths, WebP is the smallest of the three (0.71 × JPEG's bytes at 256 px
/// on the benchmark's real photos, AVIF 1.00 × with libavif's q mapping; 0.66 × and 0.89 × at
/// 512 px; docs/benchmarks.md, "Bytes per Unsplash thumbnail"), and it decodes faster than AV1.
/// `jpg` asks for what the daemon fetched before this key existed.
package enum ProviderImageFormat: String, Sendable, Hashable, CaseIterable {
    /// The smallest format the daemon decodes at `q=80` and thumbnail widths: WebP.
    case auto
    /// `fm=webp`.
    case webp
    /// `fm=avif`.
    case avif
    /// `fm=jpg`.
    case jpg

    /// The `fm` value sent.
    package var fm: String {
        switch self {
        case .avif: return "avif"
        case .auto, .webp: return "webp"
        case .jpg: return "jpg"
        }
    }
}
