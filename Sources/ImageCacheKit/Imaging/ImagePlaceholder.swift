import ImageCacheProtocol

/// What a client paints before a thumbnail's first byte (docs/protocol.md, "Placeholders"):
/// a BlurHash and the average colour of an image.
///
/// For Flickr, Pixabay and `url` images nobody sends one, so the pipeline computes it from
/// pixels it has already decoded for a thumbnail (never a decode of its own): the BlurHash of
/// a box-filtered copy of at most 32 pixels a side (`BlurHash.encodeThumbnail`, 4 × 3
/// components, 3 × 4 when portrait), and the colour as that hash's average (its DC term), so
/// the two always agree. Alpha is not weighed: a transparent pixel counts with its colour.
package struct ImagePlaceholder: Sendable, Hashable {
    /// A BlurHash of the image.
    package var blurHash: String
    /// `#rrggbb`, lower-case sRGB.
    package var color: String

    /// A placeholder as stored or sent; both are the wire's forms (unchecked here).
    package init(blurHash: String, color: String) {
        self.blurHash = blurHash
        self.color = color
    }

    /// A placeholder read back from outside the process (the dimensions database is a file):
    /// nil unless the hash parses as a BlurHash and the colour is `#rrggbb` (normalised), the
    /// same check Unsplash's values pass, so nothing unchecked reaches a client.
    package init?(checking blurHash: String, color: String) {
        guard (try? BlurHash.parse(blurHash)) != nil, let color = PlaceholderColor.normalised(color) else { return nil }
        self.init(blurHash: blurHash, color: color)
    }

    /// The longest side a grey image is sampled down to before it is spread to RGB (the
    /// encoder reads RGB only, and a copy of the whole image would cost more than the hash).
    static let greySampleSide = 128

    /// The placeholder of decoded pixels (grey, RGB or RGBA); nil for a buffer the encoder
    /// refuses (empty).
    static func of(_ image: PixelBuffer) -> ImagePlaceholder? {
        let hash: String?
        if image.channels >= 3 {
            hash = image.pixels.withUnsafeBufferPointer {
                BlurHash.encodeThumbnail($0, width: image.width, height: image.height, bytesPerPixel: image.channels)
            }
        } else {
            // Grey (with or without alpha): every `step`-th pixel of every `step`-th row, as RGB.
            let step = max(1, (max(image.width, image.height) + greySampleSide - 1) / greySampleSide)
            let width = max(1, image.width / step), height = max(1, image.height / step)
            guard image.width > 0, image.height > 0 else { return nil }
            var rgb = [UInt8](repeating: 0, count: width * height * 3)
            var q = 0
            for y in 0..<height {
                for x in 0..<width {
                    let value = image.pixels[(y * step * image.width + x * step) * image.channels]
                    rgb[q] = value
                    rgb[q + 1] = value
                    rgb[q + 2] = value
                    q += 3
                }
            }
            hash = rgb.withUnsafeBufferPointer { BlurHash.encodeThumbnail($0, width: width, height: height) }
        }
        guard let hash, let parsed = try? BlurHash.parse(hash) else { return nil }
        return ImagePlaceholder(blurHash: hash, color: parsed.averageHex)
    }

    /// `own`'s values where it has them (a provider's, which win), this one's for the rest.
    func under(blurHash own: String?, color ownColor: String?) -> ImagePlaceholder {
        ImagePlaceholder(blurHash: own ?? blurHash, color: ownColor ?? color)
    }
}
