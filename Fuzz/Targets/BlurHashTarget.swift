import ImageCacheProtocol

/// `blurhash`: the BlurHash reader (`BlurHash.parse`, then `decode`) on any text a provider can
/// send as `blur_hash`, and the encoder on the pixels it paints.
///
/// Properties: never a trap; a text that parses has exactly the length its size character
/// asks and only alphabet characters; it paints the size asked; painting then encoding gives
/// a hash of the same component counts that parses again.
enum BlurHashTarget {
    static let target = FuzzTarget(name: "blurhash", summary: "BlurHash.parse/decode on outside text, encode of the result", run: run)

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let text = FuzzCheck.text(bytes)
        guard let parsed = try? BlurHash.parse(text) else { return }
        FuzzCheck.require(text.utf8.count == 4 + 2 * parsed.xComponents * parsed.yComponents,
                          "\(text.debugDescription) parsed with \(parsed.xComponents)×\(parsed.yComponents) components")
        FuzzCheck.require(parsed.components.allSatisfy { $0.x.isFinite && $0.y.isFinite && $0.z.isFinite },
                          "\(text.debugDescription) gave a component that is not finite")
        guard let pixels = try? BlurHash.decode(text, width: 12, height: 8) else {
            FuzzCheck.fail("\(text.debugDescription) parsed but does not paint")
        }
        FuzzCheck.require(pixels.count == 12 * 8 * 3, "\(text.debugDescription) painted \(pixels.count) bytes")
        let again = pixels.withUnsafeBufferPointer {
            BlurHash.encode($0, width: 12, height: 8, xComponents: parsed.xComponents, yComponents: parsed.yComponents)
        }
        guard let again, let reparsed = try? BlurHash.parse(again) else {
            FuzzCheck.fail("\(text.debugDescription) painted pixels whose hash does not parse")
        }
        FuzzCheck.require(reparsed.xComponents == parsed.xComponents && reparsed.yComponents == parsed.yComponents,
                          "\(text.debugDescription) → \(again.debugDescription) changed its component counts")
    }
}
