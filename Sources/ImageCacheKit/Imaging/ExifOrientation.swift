/// How the stored pixels must be turned to show the picture upright (EXIF tag 0x0112).
///
/// Cameras store the sensor's rows as they came and record the rotation in EXIF instead of
/// moving pixels. Browsers and viewers apply it, so the daemon must too: the dimensions it
/// reports, and the thumbnails it writes, are those of the upright picture. Values outside
/// 1…8 (the corpus has 0) mean "as stored", like every viewer treats them.
public enum ExifOrientation: Int, Sendable, Hashable, CaseIterable {
    /// Stored upright.
    case up = 1
    /// Mirrored left–right.
    case upMirrored = 2
    /// Rotated 180°.
    case down = 3
    /// Mirrored top–bottom.
    case downMirrored = 4
    /// Mirrored along the top-left/bottom-right diagonal (transpose).
    case leftMirrored = 5
    /// Stored rotated 90° counter-clockwise: shown after turning it 90° clockwise.
    case right = 6
    /// Mirrored along the other diagonal (transverse).
    case rightMirrored = 7
    /// Stored rotated 90° clockwise: shown after turning it 90° counter-clockwise.
    case left = 8

    /// The orientation for a raw tag value; anything outside 1…8 is treated as upright.
    public init(tagValue: Int) {
        self = ExifOrientation(rawValue: tagValue) ?? .up
    }

    /// Whether showing the picture upright swaps its width and height (values 5–8).
    package var swapsDimensions: Bool { rawValue >= 5 }
}
