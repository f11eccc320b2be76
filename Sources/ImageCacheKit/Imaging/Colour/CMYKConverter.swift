/// Turns the CMYK pixels TurboJPEG produces for CMYK and YCCK JPEGs into RGB.
///
/// TurboJPEG can decode these only to CMYK (asking for RGB fails with "Unsupported color
/// conversion request"), and print files are common enough among stock photos that they must
/// load. Adobe applications (which write an APP14 "Adobe" marker) store the inks inverted:
/// 255 means no ink. The conversion is the naive one every browser uses without a colour
/// management system: each ink darkens its complementary channel, black darkens all three.
/// It is the fallback for files without a usable ICC profile; with one, `JPEGDecoder` converts
/// through the profile (`ColourTransform`) instead.
enum CMYKConverter {
    /// Converts interleaved CMYK to interleaved RGB; `inverted` for Adobe-written files.
    static func rgb(fromCMYK cmyk: [UInt8], pixelCount: Int, inverted: Bool) -> [UInt8] {
        var rgb = [UInt8](repeating: 0, count: pixelCount * 3)
        cmyk.withUnsafeBufferPointer { source in
            rgb.withUnsafeMutableBufferPointer { target in
                for index in 0..<pixelCount {
                    var c = Int(source[index * 4]), m = Int(source[index * 4 + 1])
                    var y = Int(source[index * 4 + 2]), k = Int(source[index * 4 + 3])
                    if !inverted { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k }
                    // Now each value is "paper left": 255 = no ink. RGB = paper × paper / 255.
                    target[index * 3] = UInt8((c * k + 127) / 255)
                    target[index * 3 + 1] = UInt8((m * k + 127) / 255)
                    target[index * 3 + 2] = UInt8((y * k + 127) / 255)
                }
            }
        }
        return rgb
    }
}
