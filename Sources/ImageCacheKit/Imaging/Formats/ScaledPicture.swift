/// A thumbnail's pixels at their exact size, in the form its codec decoded them: interleaved
/// (every format), or a JPEG's own Y, Cb and Cr planes, which a JPEG thumbnail is encoded from
/// without a round trip through RGB (`YCbCrPlanes`).
enum ScaledPicture: Sendable {
    case interleaved(PixelBuffer)
    case planar(YCbCrPlanes)
}
