import CAVIF
import CPNG
import CTurboJPEG
import CWebP
import ImageCacheProtocol

/// Real JPEG and PNG bodies made on the spot, deterministic for a given seed, so the
/// simulator and the benchmarks serve images that decode like photos without shipping any.
///
/// The pixels are a gradient with seeded noise: noise makes the encoded size grow with the
/// area as a photo's does, so a target byte size maps to a predictable pixel size.
public enum SyntheticImages {
    /// A baseline JPEG (4:2:0, quality 90) of `width` × `height`.
    public static func jpeg(width: Int, height: Int, seed: UInt64 = 1, quality: Int32 = 90) -> [UInt8] {
        let pixels = rgb(width: width, height: height, seed: seed)
        guard let handle = tjInitCompress() else { return [] }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let rc = pixels.withUnsafeBufferPointer { source in
            tjCompress2(handle, source.baseAddress, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue),
                        &output, &size, Int32(TJSAMP_420.rawValue), quality, 0)
        }
        defer { tjFree(output) }
        guard rc == 0, let output else { return [] }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// An 8-bit RGB PNG of `width` × `height`.
    public static func png(width: Int, height: Int, seed: UInt64 = 1) -> [UInt8] {
        let pixels = rgb(width: width, height: height, seed: seed)
        var image = png_image()
        image.version = IC_PNG_IMAGE_VERSION
        image.width = UInt32(width)
        image.height = UInt32(height)
        image.format = IC_PNG_FORMAT_RGB
        var size: Int = 0
        let probed = pixels.withUnsafeBytes { raw in
            png_image_write_to_memory(&image, nil, &size, 0, raw.baseAddress, 0, nil)
        }
        guard probed != 0, size > 0 else { return [] }
        var output = [UInt8](repeating: 0, count: size)
        let written = output.withUnsafeMutableBytes { out in
            pixels.withUnsafeBytes { raw in
                png_image_write_to_memory(&image, out.baseAddress, &size, 0, raw.baseAddress, 0, nil)
            }
        }
        png_image_free(&image)
        guard written != 0 else { return [] }
        return Array(output.prefix(size))
    }

    /// A lossy WebP (libwebp, `quality` 0–100) of `width` × `height`: what imgix sends for
    /// `fm=webp`.
    public static func webp(width: Int, height: Int, seed: UInt64 = 1, quality: Int = 80) -> [UInt8] {
        let pixels = rgb(width: width, height: height, seed: seed)
        var output: UnsafeMutablePointer<UInt8>?
        let size = pixels.withUnsafeBufferPointer { source in
            WebPEncodeRGB(source.baseAddress, Int32(width), Int32(height), Int32(width * 3), Float(quality), &output)
        }
        defer { WebPFree(output) }
        guard size > 0, let output else { return [] }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }

    /// An AVIF (libavif with libaom, 4:2:0, `quality` 0–100 mapped to AV1's quantizer as
    /// avifenc maps it) of `width` × `height` at `depth` bits (8, 10 or 12): what imgix
    /// sends for `fm=avif`, and the tests' high-bit-depth fixtures.
    public static func avif(width: Int, height: Int, seed: UInt64 = 1, quality: Int = 80, depth: Int = 8) -> [UInt8] {
        var pixels = rgb(width: width, height: height, seed: seed)
        guard let image = avifImageCreate(UInt32(width), UInt32(height), UInt32(depth), AVIF_PIXEL_FORMAT_YUV420) else { return [] }
        defer { avifImageDestroy(image) }
        var rgbImage = avifRGBImage()
        avifRGBImageSetDefaults(&rgbImage, image)
        rgbImage.depth = 8
        rgbImage.format = AVIF_RGB_FORMAT_RGB
        rgbImage.rowBytes = UInt32(width * 3)
        let converted = pixels.withUnsafeMutableBufferPointer { buffer -> avifResult in
            rgbImage.pixels = buffer.baseAddress
            return avifImageRGBToYUV(image, &rgbImage)
        }
        guard converted == AVIF_RESULT_OK, let encoder = avifEncoderCreate() else { return [] }
        defer { avifEncoderDestroy(encoder) }
        // avifenc's mapping of a 0–100 quality to the 0–63 quantizer (lower is better).
        let quantizer = Int32(max(0, min(63, ((100 - quality) * 63 + 50) / 100)))
        encoder.pointee.minQuantizer = max(0, quantizer - 4)
        encoder.pointee.maxQuantizer = min(63, quantizer + 4)
        encoder.pointee.speed = 8
        encoder.pointee.maxThreads = 1
        var output = avifRWData()
        defer { avifRWDataFree(&output) }
        guard avifEncoderWrite(encoder, image, &output) == AVIF_RESULT_OK, let data = output.data else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: output.size))
    }

    /// A JPEG of roughly `bytes` bytes (within about 15 %), found by scaling a square's side.
    public static func jpeg(approximateBytes bytes: Int, seed: UInt64 = 1) -> [UInt8] {
        var side = 64
        var image = jpeg(width: side, height: side, seed: seed)
        for _ in 0..<6 where !image.isEmpty {
            let ratio = Double(bytes) / Double(image.count)
            if abs(ratio - 1) < 0.1 { break }
            side = max(16, Int((Double(side) * ratio.squareRoot()).rounded()))
            image = jpeg(width: side, height: side, seed: seed)
        }
        return image
    }

    /// The placeholders of the image `jpeg(width:height:seed:)` makes, as Unsplash sends them
    /// (`blur_hash`, `color`): computed from a rendering of at most 32 pixels a side, whose
    /// gradient is the full image's (the noise averages out in either).
    public static func placeholders(width: Int, height: Int, seed: UInt64) -> (blurHash: String, color: String)? {
        guard width > 0, height > 0 else { return nil }
        let side = BlurHash.thumbnailSide
        let smallWidth = width >= height ? side : max(1, side * width / height)
        let smallHeight = width >= height ? max(1, side * height / width) : side
        let pixels = rgb(width: smallWidth, height: smallHeight, seed: seed)
        guard let hash = pixels.withUnsafeBufferPointer({ BlurHash.encodeThumbnail($0, width: smallWidth, height: smallHeight) }),
              let parsed = try? BlurHash.parse(hash) else { return nil }
        return (hash, parsed.averageHex)
    }

    private static func rgb(width: Int, height: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                let noise = Int(state & 0x3f)
                let i = (y * width + x) * 3
                pixels[i] = UInt8(truncatingIfNeeded: x * 255 / max(1, width - 1) / 2 + noise)
                pixels[i + 1] = UInt8(truncatingIfNeeded: y * 255 / max(1, height - 1) / 2 + noise)
                pixels[i + 2] = UInt8(truncatingIfNeeded: 128 + noise)
            }
        }
        return pixels
    }
}
