import ImageCacheProtocol

/// What an image's first bytes say about it, before any pixel is decoded.
///
/// `width`/`height` are the upright dimensions (EXIF orientation applied): what the masonry
/// layout needs and what a thumbnail's aspect ratio follows. The stored ones are what the
/// decoder will produce, and what the pixel limit is checked against.
public struct ImageHeader: Sendable, Hashable {
    /// The container, from its magic number.
    public var format: ImageFormat
    /// Width of the pixels as stored in the file.
    package var storedWidth: Int
    /// Height of the pixels as stored in the file.
    package var storedHeight: Int
    /// The EXIF orientation (JPEG), or an AVIF's `irot`/`imir` as one; `.up` for everything else
    /// or when EXIF is absent or broken.
    package var orientation: ExifOrientation
    /// Whether the image declares an alpha channel (PNG colour types 4/6; WebP's alpha flag; an
    /// AVIF alpha auxiliary image). A GIF's transparent index is only known from its frame.
    /// A PNG whose transparency comes from a tRNS chunk is only known to have alpha once decoded.
    package var hasAlpha: Bool
    /// Whether a JPEG is progressive (its decode holds every coefficient in memory).
    package var isProgressive: Bool
    /// Colour components: JPEG 1 (grey), 3 (YCbCr/RGB), 4 (CMYK/YCCK); PNG channels per
    /// colour type; 3 or 4 for GIF/WebP/AVIF.
    public var components: Int

    /// Creates a header; the probe is the usual source, tests and the pipeline may build one.
    public init(format: ImageFormat, storedWidth: Int, storedHeight: Int, orientation: ExifOrientation = .up,
                hasAlpha: Bool = false, isProgressive: Bool = false, components: Int = 3) {
        self.format = format
        self.storedWidth = storedWidth
        self.storedHeight = storedHeight
        self.orientation = orientation
        self.hasAlpha = hasAlpha
        self.isProgressive = isProgressive
        self.components = components
    }

    /// Width of the picture shown upright.
    public var width: Int { orientation.swapsDimensions ? storedHeight : storedWidth }
    /// Height of the picture shown upright.
    public var height: Int { orientation.swapsDimensions ? storedWidth : storedHeight }
    /// Pixels a full decode would produce; `Int.max` when the product overflows. The sizes
    /// are the file's own numbers (an AVIF's `ispe` holds two 32-bit ones): a hostile header
    /// must get `too_large`, never a trap.
    package var pixelCount: Int { storedWidth.multipliedClamped(by: storedHeight) }

    /// Throws `too_large` when the declared size exceeds `maxPixels`: called before any pixel
    /// buffer exists, so a 65000×65000 header costs microseconds and no memory.
    package func checkPixelLimit(_ maxPixels: Int) throws(ImagingError) {
        if maxPixels > 0 && pixelCount > maxPixels {
            throw ImagingError.tooLarge(width: storedWidth, height: storedHeight, maxPixels: maxPixels)
        }
    }
}
