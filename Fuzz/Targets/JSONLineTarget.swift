import Foundation
@testable import ImageCacheProtocol
@testable import ImageCacheServer

/// `json-line`: the daemon's JSON parser (`JSONLineParser`, after the `JSONNesting` guard, as
/// `IncomingMessageParser` runs them) against `JSONDecoder`, the reference it replaced.
///
/// Every line the parser takes, `JSONDecoder` reads to the same value. The other way round,
/// a line only `JSONDecoder` takes must be one of the documented differences (a trailing
/// comma, NUL bytes before the value or a NUL after it, text JSONDecoder reads as UTF-16 or
/// UTF-32 because of a NUL in its first four bytes, a number with a leading zero such as
/// `0613`, and an invalid escape (a lone surrogate included) or bytes that are not UTF-8 in a
/// repeated key's dropped value,
/// which JSONDecoder never reads: RFC 8259 refuses them all). Numbers past 2^53 are compared
/// as `agrees` says. Same property as JSONLineParserTests, on mutated bytes.
enum JSONLineTarget {
    static let target = FuzzTarget(name: "json-line", summary: "JSONLineParser vs JSONDecoder", run: run)

    static func run(_ bytes: UnsafeRawBufferPointer) {
        guard JSONNesting.scan(bytes, limit: JSONNesting.maximumDepth) == .acceptable else { return }
        let ours = try? JSONLineParser.parse(bytes)
        let reference = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        switch (ours, reference) {
        case (let ours?, let reference?):
            FuzzCheck.require(agrees(ours, reference), "JSONLineParser read \(ours), JSONDecoder \(reference)")
        case (let ours?, nil):
            FuzzCheck.fail("JSONLineParser took a line JSONDecoder refuses: \(ours)")
        case (nil, let reference?):
            // JSONDecoder also lets some bytes that are not UTF-8 through (in a repeated key's
            // dropped value); the parser, like the RFC, refuses them anywhere.
            FuzzCheck.require(hasTrailingComma(bytes) || hasNULAroundValue(bytes) || mayBeWideText(bytes) || hasLeadingZero(bytes)
                                  || hasInvalidEscape(bytes) || String(validating: bytes, as: UTF8.self) == nil,
                              "JSONDecoder took a line JSONLineParser refuses: \(reference)")
        case (nil, nil):
            break
        }
    }

    /// Whether the parser's value is JSONDecoder's, but where JSONDecoder is not exact, the
    /// one place they may differ. Past 2^53, a whole number written with a fraction or an
    /// exponent that fits an Int (`9223372036854775807.0`) is the parser's exact int where
    /// JSONDecoder rounds it to a double, and a number that is not whole
    /// (`9223372036854771.5`) is the parser's double where JSONDecoder cuts it to an int. A
    /// number too small for a double (`1E-9223372038`) is not whole: the parser's 0.0, where
    /// JSONDecoder reads the rounded 0 as the int 0.
    static func agrees(_ ours: JSONValue, _ reference: JSONValue) -> Bool {
        let beyondExact = 9_007_199_254_740_992.0  // 2^53
        switch (ours, reference) {
        case (.int(let exact), .double(let rounded)):
            return rounded.magnitude >= beyondExact && Double(exact) == rounded
        case (.double(let rounded), .int(let cut)):
            // JSONDecoder drops the fraction, the parser rounds: within two steps of a double.
            if rounded == 0 { return cut == 0 }
            return rounded.magnitude >= beyondExact && (Double(cut) - rounded).magnitude <= 2 * rounded.ulp
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { agrees($0, $1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map { agrees(value, $0) } ?? false }
        default:
            return ours == reference
        }
    }

    /// Whether the line has NUL bytes before its value or a NUL after it, which JSONDecoder
    /// passes over (`\0 2` is 2 to it) or reads as the end of the text (`2\0\0x` is 2: what
    /// follows the NUL is never read), and RFC 8259 does not allow.
    static func hasNULAroundValue(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let start = bytes.firstIndex { $0 != 0 } ?? bytes.endIndex
        let end = bytes[start...].firstIndex(of: 0) ?? bytes.endIndex
        guard start > bytes.startIndex || end < bytes.endIndex, start < end else { return false }
        return (try? JSONDecoder().decode(JSONValue.self, from: Data(bytes[start..<end]))) != nil
    }

    /// Whether JSONDecoder may read the line as UTF-16 or UTF-32: it guesses the encoding
    /// from NULs among the first four bytes (`00 00 00 31` is "1" in UTF-32BE to it), where
    /// RFC 8259 allows UTF-8 only.
    static func mayBeWideText(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.prefix(4).contains(0)
    }

    /// Whether a number outside any string starts with a `0` followed by another digit
    /// (`0613`, `-01`), which JSONDecoder reads and RFC 8259's grammar does not allow.
    static func hasLeadingZero(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var inString = false, escaped = false
        var previous: UInt8 = 0x20
        for (index, byte) in bytes.enumerated() {
            defer { previous = byte }
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            if byte == UInt8(ascii: "\"") { inString = true; continue }
            let startsNumber = !(previous >= UInt8(ascii: "0") && previous <= UInt8(ascii: "9"))
                && previous != UInt8(ascii: ".") && previous != UInt8(ascii: "e") && previous != UInt8(ascii: "E")
                && previous != UInt8(ascii: "+")
            if byte == UInt8(ascii: "0"), startsNumber, index + 1 < bytes.count,
               bytes[index + 1] >= UInt8(ascii: "0"), bytes[index + 1] <= UInt8(ascii: "9") {
                return true
            }
        }
        return false
    }

    /// Whether a string holds an escape RFC 8259 does not define (`\\i`, a `\\u` without four
    /// hex digits) or a surrogate escape without its pair (`\\ude00` alone), which the daemon
    /// refuses because it is no character.
    static func hasInvalidEscape(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let simple = Set("\"\\/bfnrt".utf8)
        var inString = false
        var pendingHigh = false  // the last escape was a high surrogate awaiting its low half
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if !inString {
                if byte == UInt8(ascii: "\"") { inString = true }
            } else if byte == UInt8(ascii: "\\") {
                guard index + 1 < bytes.endIndex else { return true }
                let next = bytes[index + 1]
                if next == UInt8(ascii: "u") {
                    guard index + 5 < bytes.endIndex,
                          let unit = UInt16(String(decoding: bytes[(index + 2)...(index + 5)], as: UTF8.self), radix: 16) else { return true }
                    let high = (0xD800...0xDBFF).contains(unit), low = (0xDC00...0xDFFF).contains(unit)
                    if pendingHigh != low { return true }
                    pendingHigh = high
                    index += 5
                } else if simple.contains(next), !pendingHigh {
                    index += 1
                } else {
                    return true
                }
            } else if pendingHigh {
                return true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            index += 1
        }
        return false
    }

    /// Whether a `,` is followed (after whitespace) by `]` or `}` outside any string.
    static func hasTrailingComma(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var inString = false, escaped = false, afterComma = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true; afterComma = false
            case UInt8(ascii: ","): afterComma = true
            case UInt8(ascii: "]"), UInt8(ascii: "}"): if afterComma { return true }
            case 0x20, 0x09, 0x0A, 0x0D: break
            default: afterComma = false
            }
        }
        return false
    }
}
