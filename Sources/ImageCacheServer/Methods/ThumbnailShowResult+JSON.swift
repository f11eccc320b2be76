import Foundation
import ImageCacheKit

extension ThumbnailShowResult {
    /// The result's JSON written by hand, in the order `encode(to:)` uses.
    ///
    /// A memory hit is the daemon's hottest answer, and Foundation's encoder costs more than
    /// the rest of the hit, most of all for `inline: true`, where it walks a 40 KB base64
    /// string character by character; base64 needs no escaping, so it is copied as it is.
    /// A test checks this against `JSONEncoder`'s output for every field's shape.
    func encodedJSON() -> EncodedJSON {
        var out: [UInt8] = []
        out.reserveCapacity(160 + path.utf8.count + (data?.utf8.count ?? 0))
        func key(_ name: StaticString, first: Bool = false) {
            if !first { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            name.withUTF8Buffer { out.append(contentsOf: $0) }
            out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }
        out.append(UInt8(ascii: "{"))
        key("slot", first: true); out.append(contentsOf: String(slot).utf8)
        key("view"); JSONText.appendString(view, to: &out)
        key("photo")
        if let photo { JSONText.appendString(photo, to: &out) } else { out.append(contentsOf: "null".utf8) }
        key("path"); JSONText.appendString(path, to: &out)
        key("width"); out.append(contentsOf: String(width).utf8)
        key("height"); out.append(contentsOf: String(height).utf8)
        key("bytes"); out.append(contentsOf: String(bytes).utf8)
        key("mime"); JSONText.appendString(mime, to: &out)
        key("source"); JSONText.appendString(source.rawValue, to: &out)
        if let data {
            // Base64's alphabet (A–Z a–z 0–9 + / =) never needs escaping.
            key("data"); out.append(UInt8(ascii: "\"")); out.append(contentsOf: data.utf8); out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return EncodedJSON(writtenBytes: out)
    }
}

/// Writing JSON strings by hand, as Foundation's encoder would (slashes unescaped).
enum JSONText {
    /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped,
    /// everything else (UTF-8 included) as it is, so no raw newline can reach the wire.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
