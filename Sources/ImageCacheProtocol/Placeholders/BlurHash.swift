#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// BlurHash, the compact placeholder format Unsplash sends with every photo (`blur_hash`) and
/// the daemon computes for the others: a few cosine components of an image in 20–30
/// characters, which a client paints (blurred) before the thumbnail's first byte.
///
/// Written here, in the protocol module, because it is the format of a wire field: the daemon
/// encodes it from a decoded thumbnail and checks the ones providers send, a client decodes
/// it, the provider simulator makes realistic ones. The algorithm and its rounding are the
/// reference implementation's (github.com/woltapp/blurhash, `C/encode.c`, `TypeScript/decode`),
/// checked against its published hashes (Tests/Fixtures/blurhash).
///
/// A hash from outside is untrusted: `parse` checks its length against its declared component
/// counts, its alphabet and every value's range before anything is computed, and `decode`
/// refuses an output size over `maxDecodedPixels`.
public enum BlurHash {
    /// Components per axis the format can hold (1…9).
    public static let componentRange = 1...9

    /// The most pixels `decode` paints (a placeholder is small; its client scales it).
    public static let maxDecodedPixels = 256 * 256

    /// Why a string is not a BlurHash (or a size not one to paint).
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// Shorter than 6 characters, or not the length its component counts ask.
        case length(Int, expected: Int?)
        /// A character outside the format's 83-character alphabet.
        case alphabet(position: Int)
        /// The size character names more than 9 × 9 components.
        case componentCount
        /// The average colour, or an AC component, is beyond its encoding's range.
        case valueRange(position: Int)
        /// A size to paint that is not positive or exceeds `maxDecodedPixels`.
        case size(width: Int, height: Int)

        public var description: String {
            switch self {
            case .length(let count, let expected?): return "a BlurHash of its size has \(expected) characters, not \(count)"
            case .length(let count, nil): return "a BlurHash has at least 6 characters, not \(count)"
            case .alphabet(let position): return "character \(position) is not in the BlurHash alphabet"
            case .componentCount: return "the size character names more than 9×9 components"
            case .valueRange(let position): return "the value at character \(position) is out of range"
            case .size(let width, let height): return "cannot paint a \(width)×\(height) placeholder"
            }
        }
    }

    /// A hash read into its parts: component counts and each component's colour, linear RGB.
    public struct Parsed: Sendable, Hashable {
        /// Components along x and y (1…9 each).
        public var xComponents: Int
        /// See `xComponents`.
        public var yComponents: Int
        /// The average colour as sRGB bytes (the hash's DC term, exactly as sent).
        public var average: (red: UInt8, green: UInt8, blue: UInt8) { (UInt8(dc >> 16), UInt8(dc >> 8 & 0xFF), UInt8(dc & 0xFF)) }
        /// The DC term as written: 0xRRGGBB.
        public var dc: Int
        /// Every component, DC first then row by row, in linear RGB (`maximum`-scaled ACs).
        public var components: [SIMD3<Float>]

        /// The average colour as `#rrggbb` (what the daemon sends as `color`).
        public var averageHex: String { PlaceholderColor.hex(red: average.red, green: average.green, blue: average.blue) }

        public static func == (a: Parsed, b: Parsed) -> Bool {
            a.xComponents == b.xComponents && a.yComponents == b.yComponents && a.dc == b.dc && a.components == b.components
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(xComponents)
            hasher.combine(yComponents)
            hasher.combine(dc)
        }
    }

    // MARK: Decoding

    /// `hash` checked and read, strictly (length, alphabet, component count, ranges).
    public static func parse(_ hash: String) throws(Failure) -> Parsed {
        let utf8 = Array(hash.utf8.prefix(4 + 2 * 81 + 1))
        guard utf8.count >= 6 else { throw .length(utf8.count, expected: nil) }
        var digits = [Int](repeating: 0, count: utf8.count)
        for (position, byte) in utf8.enumerated() {
            guard let digit = Base83.digit(byte) else { throw .alphabet(position: position) }
            digits[position] = digit
        }
        let sizeFlag = digits[0]
        guard sizeFlag < 81 else { throw .componentCount }
        let xComponents = sizeFlag % 9 + 1
        let yComponents = sizeFlag / 9 + 1
        let expected = 4 + 2 * xComponents * yComponents
        guard hash.utf8.count == expected else { throw .length(hash.utf8.count, expected: expected) }
        let maximum = Float(digits[1] + 1) / 166
        let dc = Base83.value(digits[2..<6])
        guard dc <= 0xFF_FFFF else { throw .valueRange(position: 2) }
        var components = [SIMD3<Float>]()
        components.reserveCapacity(xComponents * yComponents)
        components.append(SIMD3(Color.linear(dc >> 16), Color.linear(dc >> 8 & 0xFF), Color.linear(dc & 0xFF)))
        var position = 6
        while position < expected {
            let value = Base83.value(digits[position..<(position + 2)])
            guard value < 19 * 19 * 19 else { throw .valueRange(position: position) }
            let quantised = SIMD3<Float>(Float(value / (19 * 19)), Float(value / 19 % 19), Float(value % 19))
            let unit = (quantised - 9) / 9
            components.append(unit * unit.replacing(with: -unit, where: unit .< 0) * maximum)
            position += 2
        }
        return Parsed(xComponents: xComponents, yComponents: yComponents, dc: dc, components: components)
    }

    /// The placeholder `hash` paints at `width` × `height`, as RGB bytes (row by row);
    /// `punch` scales the contrast as the reference decoder's does.
    public static func decode(_ hash: String, width: Int, height: Int, punch: Float = 1) throws(Failure) -> [UInt8] {
        guard width > 0, height > 0, width <= maxDecodedPixels, height <= maxDecodedPixels,
              width * height <= maxDecodedPixels else { throw .size(width: width, height: height) }
        var parsed = try parse(hash)
        let punch = punch.isFinite ? max(punch, 0) : 1
        for index in parsed.components.indices.dropFirst() { parsed.components[index] *= punch }
        let cosX = cosines(parsed.xComponents, width)
        let cosY = cosines(parsed.yComponents, height)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        var offset = 0
        for y in 0..<height {
            for x in 0..<width {
                var sum = SIMD3<Float>(0, 0, 0)
                for j in 0..<parsed.yComponents {
                    let row = cosY[j * height + y]
                    for i in 0..<parsed.xComponents {
                        sum += parsed.components[j * parsed.xComponents + i] * (cosX[i * width + x] * row)
                    }
                }
                pixels[offset] = UInt8(Color.sRGB(sum.x))
                pixels[offset + 1] = UInt8(Color.sRGB(sum.y))
                pixels[offset + 2] = UInt8(Color.sRGB(sum.z))
                offset += 3
            }
        }
        return pixels
    }

    // MARK: Encoding

    /// The hash of an image of `width` × `height` pixels whose RGB bytes start every
    /// `bytesPerPixel` bytes of `pixels` (row by row, no padding), with `xComponents` ×
    /// `yComponents` components (1…9 each); nil when the sizes do not fit `pixels`.
    ///
    /// Its cost is width × height × components: encode from a small copy of the image (the
    /// daemon's is at most 32 pixels a side), which changes the hash by a rounding at most.
    public static func encode(_ pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int, bytesPerPixel: Int = 3,
                              xComponents: Int = 4, yComponents: Int = 3) -> String? {
        guard componentRange.contains(xComponents), componentRange.contains(yComponents), bytesPerPixel >= 3,
              width > 0, height > 0 else { return nil }
        let (area, overflow) = width.multipliedReportingOverflow(by: height)
        let (bytes, overflow2) = area.multipliedReportingOverflow(by: bytesPerPixel)
        guard !overflow, !overflow2, bytes <= pixels.count else { return nil }
        let cosX = cosines(xComponents, width)
        let cosY = cosines(yComponents, height)
        var factors = [SIMD3<Float>](repeating: SIMD3(0, 0, 0), count: xComponents * yComponents)
        // One pass over the pixels, every component summed at once.
        var linear = [SIMD3<Float>](repeating: SIMD3(0, 0, 0), count: width)
        for y in 0..<height {
            let rowStart = y * width * bytesPerPixel
            for x in 0..<width {
                let p = rowStart + x * bytesPerPixel
                linear[x] = SIMD3(Color.table[Int(pixels[p])], Color.table[Int(pixels[p + 1])], Color.table[Int(pixels[p + 2])])
            }
            for j in 0..<yComponents {
                let row = cosY[j * height + y]
                for i in 0..<xComponents {
                    var sum = SIMD3<Float>(0, 0, 0)
                    let base = i * width
                    for x in 0..<width { sum += linear[x] * cosX[base + x] }
                    factors[j * xComponents + i] += sum * row
                }
            }
        }
        let scale = 1 / Float(area)
        for index in factors.indices { factors[index] *= (index == 0 ? 1 : 2) * scale }
        return encode(factors: factors, xComponents: xComponents, yComponents: yComponents)
    }

    /// The longest side of the copy `encodeThumbnail` encodes from.
    public static let thumbnailSide = 32

    /// The daemon's placeholder of a decoded image (a thumbnail): a box-filtered copy of at
    /// most `thumbnailSide` pixels a side (each pixel the mean of up to 4 × 4 samples of its
    /// box), encoded with 4 × 3 components (3 × 4 for a portrait image): a fixed cost of at most
    /// 1 024 × 16 reads and 1 024 × 12 products, whatever the thumbnail's size.
    public static func encodeThumbnail(_ pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int,
                                       bytesPerPixel: Int = 3) -> String? {
        guard width > 0, height > 0, bytesPerPixel >= 3 else { return nil }
        let (area, overflow) = width.multipliedReportingOverflow(by: height)
        let (bytes, overflow2) = area.multipliedReportingOverflow(by: bytesPerPixel)
        guard !overflow, !overflow2, bytes <= pixels.count else { return nil }
        let scale = max(1, (max(width, height) + thumbnailSide - 1) / thumbnailSide)
        let smallWidth = max(1, width / scale), smallHeight = max(1, height / scale)
        var small = [UInt8](repeating: 0, count: smallWidth * smallHeight * 3)
        // Each small pixel is the mean of at most 4 × 4 samples evenly spread over its
        // scale × scale box (the last row and column of the original that do not fill a box
        // are left out): reading every pixel of a 512 px thumbnail would cost more than the
        // encode, and a placeholder is blurred far past the difference.
        let step = max(1, scale / 4)
        let samples = (scale + step - 1) / step
        let count = samples * samples
        for y in 0..<smallHeight {
            for x in 0..<smallWidth {
                var red = 0, green = 0, blue = 0
                for row in stride(from: y * scale, to: y * scale + scale, by: step) {
                    var p = (row * width + x * scale) * bytesPerPixel
                    for _ in 0..<samples {
                        red += Int(pixels[p])
                        green += Int(pixels[p + 1])
                        blue += Int(pixels[p + 2])
                        p += step * bytesPerPixel
                    }
                }
                let q = (y * smallWidth + x) * 3
                small[q] = UInt8(red / count)
                small[q + 1] = UInt8(green / count)
                small[q + 2] = UInt8(blue / count)
            }
        }
        let portrait = height > width
        return small.withUnsafeBufferPointer {
            encode($0, width: smallWidth, height: smallHeight, xComponents: portrait ? 3 : 4, yComponents: portrait ? 4 : 3)
        }
    }

    /// The text of a hash from its components (DC first), quantised as the reference does.
    static func encode(factors: [SIMD3<Float>], xComponents: Int, yComponents: Int) -> String {
        var text = [UInt8]()
        text.reserveCapacity(4 + 2 * factors.count)
        Base83.append((xComponents - 1) + (yComponents - 1) * 9, length: 1, to: &text)
        let ac = factors.dropFirst()
        let maximum: Float
        if ac.isEmpty {
            maximum = 1
            Base83.append(0, length: 1, to: &text)
        } else {
            let actual = ac.reduce(Float(0)) { max($0, abs($1.x), abs($1.y), abs($1.z)) }
            let quantised = Int(max(0, min(82, (actual * 166 - 0.5).rounded(.down))))
            maximum = Float(quantised + 1) / 166
            Base83.append(quantised, length: 1, to: &text)
        }
        let dc = factors[0]
        Base83.append(Color.sRGB(dc.x) << 16 | Color.sRGB(dc.y) << 8 | Color.sRGB(dc.z), length: 4, to: &text)
        for factor in ac {
            func quantise(_ value: Float) -> Int {
                let root = (abs(value / maximum)).squareRoot() * (value < 0 ? -1 : 1)
                return Int(max(0, min(18, (root * 9 + 9.5).rounded(.down))))
            }
            Base83.append(quantise(factor.x) * 19 * 19 + quantise(factor.y) * 19 + quantise(factor.z), length: 2, to: &text)
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `cos(π · component · position / size)` for every component and position, component-major.
    private static func cosines(_ components: Int, _ size: Int) -> [Float] {
        var table = [Float](repeating: 0, count: components * size)
        for component in 0..<components {
            for position in 0..<size {
                table[component * size + position] = cosf(Float.pi * Float(component) * Float(position) / Float(size))
            }
        }
        return table
    }
}

/// sRGB ↔ linear as the reference does it.
enum Color {
    /// sRGB byte → linear, all 256 of them.
    static let table: [Float] = (0..<256).map { linear($0) }

    static func linear(_ value: Int) -> Float {
        let v = Float(value) / 255
        return v <= 0.04045 ? v / 12.92 : powf((v + 0.055) / 1.055, 2.4)
    }

    /// Linear → sRGB byte (0…255), clamped.
    static func sRGB(_ value: Float) -> Int {
        let v = value.isNaN ? 0 : max(0, min(1, value))
        if v <= 0.0031308 { return Int(v * 12.92 * 255 + 0.5) }
        return Int((1.055 * powf(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }
}

/// The format's base-83 digits.
enum Base83 {
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)

    /// Each byte's digit, or -1.
    private static let digits: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (digit, byte) in alphabet.enumerated() { table[Int(byte)] = Int8(digit) }
        return table
    }()

    static func digit(_ byte: UInt8) -> Int? {
        let digit = digits[Int(byte)]
        return digit < 0 ? nil : Int(digit)
    }

    /// The value of already checked digits (at most 4, so it cannot overflow).
    static func value(_ digits: ArraySlice<Int>) -> Int {
        digits.reduce(0) { $0 * 83 + $1 }
    }

    static func append(_ value: Int, length: Int, to text: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<max(length, 1) { divisor *= 83 }
        for _ in 0..<length {
            text.append(alphabet[(value / divisor) % 83])
            divisor /= 83
        }
    }
}
