/// A photo's placeholder colour as the wire writes it: `#rrggbb`, lower-case, sRGB.
///
/// Unsplash sends one (`color`) with every photo; the daemon computes the others' from the
/// first decoded thumbnail (the BlurHash's average). A provider's text is outside input, so
/// `normalised` accepts exactly `#` and six hex digits and nothing else.
public enum PlaceholderColor {
    /// `#rrggbb` for the three bytes.
    public static func hex(red: UInt8, green: UInt8, blue: UInt8) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = [UInt8(ascii: "#")]
        for byte in [red, green, blue] {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The colour `text` names, as `#rrggbb` lower-case; nil for anything but `#` and six
    /// hex digits (either case).
    public static func normalised(_ text: String) -> String? {
        guard let bytes = rgb(text) else { return nil }
        return hex(red: bytes.red, green: bytes.green, blue: bytes.blue)
    }

    /// The three bytes of a `#rrggbb` text; nil for anything else.
    public static func rgb(_ text: String) -> (red: UInt8, green: UInt8, blue: UInt8)? {
        let utf8 = Array(text.utf8.prefix(8))
        guard utf8.count == 7, utf8[0] == UInt8(ascii: "#") else { return nil }
        var values = [UInt8]()
        for index in stride(from: 1, to: 7, by: 2) {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            values.append(high << 4 | low)
        }
        return (values[0], values[1], values[2])
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
