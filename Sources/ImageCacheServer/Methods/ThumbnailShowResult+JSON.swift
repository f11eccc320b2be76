import Foundation
import ImageCacheKit
import NIOCore

extension ThumbnailShowResult {
    /// Writes the result's JSON by hand, in the order `encode(to:)` uses, straight into the
    /// response's buffer.
    ///
    /// A memory hit is the daemon's hottest answer, and Foundation's encoder costs more than
    /// the rest of the hit, most of all for `inline: true`, where it walks a 40 KB base64
    /// string character by character; base64 needs no escaping, so it is copied as it is, and
    /// only once: into the buffer that goes to the socket. A test checks this against
    /// `JSONEncoder`'s output for every field's shape.
    func writeJSON(to out: inout ByteBuffer) {
        func key(_ name: StaticString, first: Bool = false) {
            out.writeStaticString(first ? "{\"" : ",\"")
            out.writeStaticString(name)
            out.writeStaticString("\":")
        }
        key("slot", first: true); out.writeString(String(slot))
        key("view"); JSONText.appendString(view, to: &out)
        key("photo")
        if let photo { JSONText.appendString(photo, to: &out) } else { out.writeStaticString("null") }
        key("path"); JSONText.appendString(path, to: &out)
        key("width"); out.writeString(String(width))
        key("height"); out.writeString(String(height))
        key("bytes"); out.writeString(String(bytes))
        key("mime"); JSONText.appendString(mime, to: &out)
        key("source"); JSONText.appendString(source.rawValue, to: &out)
        if let data {
            // Base64's alphabet (A–Z a–z 0–9 + / =) never needs escaping.
            key("data"); out.writeStaticString("\""); out.writeString(data); out.writeStaticString("\"")
        }
        out.writeStaticString("}")
    }

    /// Bytes `writeJSON` needs, or a little more: the buffer is sized once.
    var jsonCapacity: Int { 160 + view.utf8.count + (photo?.utf8.count ?? 0) + path.utf8.count + (data?.utf8.count ?? 0) }

    /// The result's JSON as a value of its own (for tests and generic callers).
    func encodedJSON() -> EncodedJSON {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(jsonCapacity)
        writeJSON(to: &buffer)
        return EncodedJSON(writtenBytes: Array(buffer.readableBytesView))
    }
}

/// Writing JSON strings by hand, as Foundation's encoder would (slashes unescaped).
enum JSONText {
    /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped,
    /// everything else (UTF-8 included) as it is, so no raw newline can reach the wire.
    static func appendString(_ text: String, to out: inout ByteBuffer) {
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.writeStaticString("\"")
            out.writeString(text)
            out.writeStaticString("\"")
            return
        }
        var escaped: [UInt8] = []
        appendString(text, to: &escaped)
        out.writeBytes(escaped)
    }

    /// `appendString` into an array of bytes.
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
