import NIOCore

/// Writes JSON text through one raw pointer into room reserved beforehand.
///
/// A memory hit's answer is the daemon's hottest line, and writing it member by member into a
/// `ByteBuffer` paid a capacity check, an exclusivity check and a call for each of its twenty
/// pieces, and scanned every string through `String.UTF8View` one byte at a time. Here the
/// line's bound is computed once (`ByteBuffer.writeJSON(bound:_:)`), every piece is a
/// `memcpy` or a few stores, and strings are scanned over their contiguous UTF-8.
///
/// Strings are written as Foundation's encoder would (slashes unescaped): quotes, backslashes
/// and control characters escaped, everything else (UTF-8 included) as it is, so no raw
/// newline can reach the wire. Each write checks its room: a wrong bound stops the daemon
/// rather than writing past the buffer.
struct JSONWriter {
    private var cursor: UnsafeMutableRawPointer
    private let end: UnsafeMutableRawPointer
    private let start: UnsafeMutableRawPointer

    fileprivate init(_ room: UnsafeMutableRawBufferPointer) {
        precondition(room.count > 0, "JSONWriter: no room")
        start = room.baseAddress!
        cursor = start
        end = start + room.count
    }

    /// Bytes written so far.
    var count: Int { start.distance(to: cursor) }

    /// Most bytes `string(_:)` writes for `text`: each byte may become a six-byte `\u00XX`.
    static func stringBound(_ text: String) -> Int { 2 + 6 * text.utf8.count }

    /// Most bytes `int(_:)` writes: a sign and 19 digits.
    static let intBound = 20

    /// Fixed text (punctuation, member names) as it is.
    mutating func raw(_ text: StaticString) {
        copy(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Bytes that are already JSON text (an encoded value, base64 without its quotes).
    mutating func raw(_ bytes: UnsafeRawBufferPointer) {
        copy(bytes)
    }

    /// Text that needs no escaping (base64, digits) as it is, without quotes.
    mutating func unescaped(_ text: String) {
        var text = text
        text.withUTF8 { copy(UnsafeRawBufferPointer($0)) }
    }

    /// A JSON number.
    mutating func int(_ value: Int) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch, most significant last
        withUnsafeMutableBytes(of: &digits) { scratch in
            var magnitude = value.magnitude
            var index = scratch.count
            repeat {
                index -= 1
                scratch[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                index -= 1
                scratch[index] = UInt8(ascii: "-")
            }
            copy(UnsafeRawBufferPointer(rebasing: scratch[index...]))
        }
    }

    /// A JSON string: quoted, with runs that need no escaping copied whole.
    mutating func string(_ text: String) {
        var text = text
        put(UInt8(ascii: "\""))
        text.withUTF8 { utf8 in
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                copy(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[runStart..<index])))
                escape(byte)
                runStart = index + 1
            }
            copy(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[runStart...])))
        }
        put(UInt8(ascii: "\""))
    }

    private mutating func escape(_ byte: UInt8) {
        put(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): put(byte)
        case 0x0A: put(UInt8(ascii: "n"))
        case 0x0D: put(UInt8(ascii: "r"))
        case 0x09: put(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            raw("u00")
            put(hex.utf8Start[Int(byte >> 4)])
            put(hex.utf8Start[Int(byte & 0xF)])
        }
    }

    private mutating func put(_ byte: UInt8) {
        precondition(cursor < end, "JSONWriter: the bound was too small")
        cursor.storeBytes(of: byte, as: UInt8.self)
        cursor += 1
    }

    private mutating func copy(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        precondition(bytes.count <= cursor.distance(to: end), "JSONWriter: the bound was too small")
        cursor.copyMemory(from: base, byteCount: bytes.count)
        cursor += bytes.count
    }
}

extension ByteBuffer {
    /// Appends what `body` writes, in room for `bound` bytes reserved once.
    mutating func writeJSON(bound: Int, _ body: (inout JSONWriter) -> Void) {
        reserveCapacity(writerIndex + bound)  // exactly: growing by itself would round up to a power of two
        writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { room in
            var writer = JSONWriter(UnsafeMutableRawBufferPointer(rebasing: room[..<bound]))
            body(&writer)
            return writer.count
        }
    }
}
