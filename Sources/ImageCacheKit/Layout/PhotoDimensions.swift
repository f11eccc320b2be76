import ImageCacheProtocol

/// A photo's width and height as `thumbnail.dimensions` and `layout` report them
/// (docs/protocol.md, "Dimensions"): the photo's own, where its provider states them and a
/// decoded copy does not contradict them; else the decoded copy's.
///
/// A thumbnail is a scaled copy (Unsplash `raw?w=256` of a 5472×3648 photo decodes as
/// 256×171), so its pixel size is not the photo's; only its aspect tells something the
/// provider may have got wrong (a rotated original, a cropped variant). The copy agrees when
/// scaling the provider's size to the copy's width (or height) lands within one pixel of the
/// copy's other side: the rounding any scaler does. The copy's own pixel size stays in the
/// `thumbnail.show` answer.
public enum PhotoDimensions {
    /// A resolved size and where it came from.
    public struct Resolved: Sendable, Hashable {
        /// Width in pixels.
        public var width: Int
        /// Height in pixels.
        public var height: Int
        /// `provider` (the photo's own size, checked against a decoded copy when there was
        /// one) or `decoded` (the copy's, when the provider says nothing or disagrees).
        public var source: DimensionSource

    }

    /// The size to report from what the provider said and what a copy decoded to; nil when
    /// neither is known (a layout places it as a square).
    public static func resolve(providerWidth: Int?, providerHeight: Int?,
                               decoded: ImageDimensionsStore.Size?) -> Resolved? {
        let stated: (Int, Int)? = if let w = providerWidth, let h = providerHeight, w > 0, h > 0 { (w, h) } else { nil }
        guard let decoded, decoded.width > 0, decoded.height > 0 else {
            return stated.map { Resolved(width: $0.0, height: $0.1, source: .provider) }
        }
        if let (w, h) = stated, agrees(width: w, height: h, copyWidth: decoded.width, copyHeight: decoded.height) {
            return Resolved(width: w, height: h, source: .provider)
        }
        return Resolved(width: decoded.width, height: decoded.height, source: .decoded)
    }

    /// Whether a `copyWidth`×`copyHeight` copy is the `width`×`height` photo scaled, give or
    /// take the one pixel of rounding on the side that was computed.
    public static func agrees(width: Int, height: Int, copyWidth: Int, copyHeight: Int) -> Bool {
        guard width > 0, height > 0, copyWidth > 0, copyHeight > 0 else { return false }
        let (w, h, cw, ch) = (Double(width), Double(height), Double(copyWidth), Double(copyHeight))
        return abs(ch - h * cw / w) <= 1 || abs(cw - w * ch / h) <= 1
    }
}
