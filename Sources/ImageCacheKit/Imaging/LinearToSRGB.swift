import Foundation

/// Converts libpng's 16-bit linear output (premultiplied when it has alpha) to 8-bit sRGB
/// with straight alpha, the layout every other stage uses.
///
/// This is what libpng's simplified reader does itself for 8-bit output; it is redone here
/// only because that path mishandles interlaced 16-bit images in libpng 1.6.39.
enum LinearToSRGB {
    /// sRGB encoding of every 16-bit linear value (64 KiB, built on first use).
    static let table: [UInt8] = (0...65535).map { value in
        let linear = Double(value) / 65535
        let encoded = linear <= 0.003_130_8 ? 12.92 * linear : 1.055 * pow(linear, 1 / 2.4) - 0.055
        return UInt8(max(0, min(255, (encoded * 255).rounded())))
    }

    static func convert(_ linear: [UInt16], channels: Int, premultipliedAlpha: Bool) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: linear.count)
        table.withUnsafeBufferPointer { table in
            linear.withUnsafeBufferPointer { source in
                output.withUnsafeMutableBufferPointer { target in
                    guard premultipliedAlpha && channels == 4 else {
                        for index in 0..<source.count { target[index] = table[Int(source[index])] }
                        return
                    }
                    for pixel in stride(from: 0, to: source.count, by: 4) {
                        let alpha = Int(source[pixel + 3])
                        target[pixel + 3] = UInt8((alpha * 255 + 32_767) / 65_535)
                        guard alpha > 0 else { continue } // fully transparent: colour undefined, left 0
                        for channel in 0..<3 {
                            let straight = min(65_535, (Int(source[pixel + channel]) * 65_535 + alpha / 2) / alpha)
                            target[pixel + channel] = table[straight]
                        }
                    }
                }
            }
        }
        return output
    }
}
