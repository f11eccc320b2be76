import ImageCacheProtocol

/// A strict RFC 8259 parser from a request line's bytes to `JSONValue`.
///
/// Why not `JSONDecoder`: decoding an untyped `JSONValue` through `Decodable` tries each kind
/// in turn and throws for every miss, which made parsing the envelope about a third of the
/// daemon's CPU for a memory-hit `thumbnail.show` (perf, docs/benchmarks.md). This reads each
/// byte once. It keeps `JSONDecoder`'s answers where JSON leaves room: a number is an `int`
/// when its value is integral and fits (`1.0`, `1e2` included), else a `double`, and one out of
/// `Double`'s range is an error; a repeated key keeps its first value; strings must be valid
/// UTF-8 and a lone surrogate escape is an error. Where it differs, it follows the RFC: a
/// trailing comma (`[1,]`), a number with a leading zero (`01`), a NUL before or after the
/// value, text in UTF-16 or UTF-32 (which JSONDecoder guesses from NULs in the first bytes),
/// and an invalid escape or UTF-8 in a repeated key's dropped value, all of which JSONDecoder
/// lets pass, are refused. Depth is bounded before this runs
/// (`JSONNesting.scan`), so the recursion is too.
struct JSONLineParser {
    /// The line is not JSON (the position is for debugging only).
    struct Malformed: Error {
        var offset: Int
    }

    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The single JSON value of `bytes`, surrounded by nothing but whitespace.
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(Malformed) -> JSONValue {
        var parser = JSONLineParser(bytes)
        parser.skipWhitespace()
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw Malformed(offset: parser.index) }
        return value
    }

    // MARK: Values

    private mutating func value() throws(Malformed) -> JSONValue {
        guard index < bytes.count else { throw Malformed(offset: index) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return try number()
        }
    }

    private mutating func object() throws(Malformed) -> JSONValue {
        index += 1
        skipWhitespace()
        if try take(UInt8(ascii: "}")) { return .object([:]) }
        // Room for a request's envelope or params at once, instead of growing 1 → 2 → 4 → 8.
        var members: [String: JSONValue] = Dictionary(minimumCapacity: 8)
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Malformed(offset: index) }
            let key = try string()
            skipWhitespace()
            guard try take(UInt8(ascii: ":")) else { throw Malformed(offset: index) }
            skipWhitespace()
            let member = try value()
            Self.keepFirst(member, in: &members[key])
            skipWhitespace()
            if try take(UInt8(ascii: ",")) { continue }
            guard try take(UInt8(ascii: "}")) else { throw Malformed(offset: index) }
            return .object(members)
        }
    }

    /// The first of duplicate keys wins (as `JSONDecoder`); one hash lookup through `_modify`.
    private static func keepFirst(_ member: JSONValue, in slot: inout JSONValue?) {
        if slot == nil { slot = member }
    }

    private mutating func array() throws(Malformed) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if try take(UInt8(ascii: "]")) { return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try value())
            skipWhitespace()
            if try take(UInt8(ascii: ",")) { continue }
            guard try take(UInt8(ascii: "]")) else { throw Malformed(offset: index) }
            return .array(elements)
        }
    }

    private mutating func literal(_ word: StaticString) throws(Malformed) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw Malformed(offset: index) }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw Malformed(offset: index + offset)
        }
        index += count
    }

    // MARK: Numbers

    private mutating func number() throws(Malformed) -> JSONValue {
        let start = index
        var integral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        // Integer part: 0, or a non-zero digit followed by digits.
        guard index < bytes.count, isDigit(bytes[index]) else { throw Malformed(offset: index) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw Malformed(offset: index) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw Malformed(offset: index) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let token = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
        if integral, let exact = Self.integer(token) { return .int(exact) }
        // A fraction or an exponent whose exact decimal value is a whole number that fits is an
        // int, read from the digits: through a Double, 9223372036854771.0 would be ...772
        // (doubles past 2^53 are even), an id the client never sent (found by fuzzing).
        if !integral, let exact = Self.wholeNumber(token) { return .int(exact) }
        let text = String(decoding: token, as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw Malformed(offset: start) }
        // Digits alone that do not fit an Int stay a double, as in JSONDecoder: rounding can
        // bring -9223372036854775809 to Int.min, an id the client never sent (found by fuzzing).
        return .double(double)
    }

    /// The exact value of a number token with a fraction or an exponent (already checked
    /// against the grammar) when it is a whole number that fits an `Int`, else nil: its
    /// significant digits scaled by a power of ten, with no rounding anywhere.
    private static func wholeNumber(_ token: UnsafeRawBufferPointer) -> Int? {
        var digits: [UInt8] = []
        var scale = 0  // the power of ten the digits are multiplied by
        var negative = false
        var exponent = 0, exponentNegative = false
        var part = 0  // 0 integer digits, 1 fraction digits, 2 exponent
        for byte in token {
            switch byte {
            case UInt8(ascii: "-") where part == 0: negative = true
            case UInt8(ascii: "-"): exponentNegative = true
            case UInt8(ascii: "+"): break
            case UInt8(ascii: "."): part = 1
            case UInt8(ascii: "e"), UInt8(ascii: "E"): part = 2
            default:
                let digit = byte &- UInt8(ascii: "0")
                if part == 2 {
                    // Saturated: an exponent past a million says "too large" or "not whole"
                    // as well as its exact value would.
                    exponent = min(exponent * 10 + Int(digit), 1_000_000)
                } else {
                    if digit != 0 || !digits.isEmpty { digits.append(digit) }
                    if part == 1 { scale -= 1 }
                }
            }
        }
        guard !digits.isEmpty else { return 0 }
        scale += exponentNegative ? -exponent : exponent
        while digits.last == 0 {
            digits.removeLast()
            scale += 1
        }
        // A non-zero digit left below the units: not whole. More than 19 digits: past Int.
        guard scale >= 0, digits.count + scale <= 19 else { return nil }
        var value = 0
        for digit in digits + [UInt8](repeating: 0, count: scale) {
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = negative ? shifted.subtractingReportingOverflow(Int(digit))
                                             : shifted.addingReportingOverflow(Int(digit))
            if overflowA || overflowB { return nil }
            value = next
        }
        return value
    }

    /// An optional minus and digits, as an `Int`; nil when it does not fit.
    private static func integer(_ token: UnsafeRawBufferPointer) -> Int? {
        var digits = token[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        var value = 0
        for digit in digits {
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let step = Int(digit &- UInt8(ascii: "0"))
            let (next, overflowB) = negative ? shifted.subtractingReportingOverflow(step) : shifted.addingReportingOverflow(step)
            if overflowA || overflowB { return nil }
            value = next
        }
        return value
    }

    // MARK: Strings

    /// A string starting at the opening quote; the index ends past the closing one.
    private mutating func string() throws(Malformed) -> String {
        index += 1
        let start = index
        // Fast path: no escape before the closing quote.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                guard let text = Self.validated(UnsafeRawBufferPointer(rebasing: bytes[start..<index])) else {
                    throw Malformed(offset: start)
                }
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw Malformed(offset: index) }
            index += 1
        }
        var buffer = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = buffer.withUnsafeBytes({ Self.validated($0) }) else { throw Malformed(offset: start) }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                try escape(into: &buffer)
            case ..<0x20:
                throw Malformed(offset: index)
            default:
                buffer.append(byte)
                index += 1
            }
        }
        throw Malformed(offset: index)
    }

    /// One escape after its backslash, appended as UTF-8.
    private mutating func escape(into buffer: inout [UInt8]) throws(Malformed) {
        guard index < bytes.count else { throw Malformed(offset: index) }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(byte)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by an escaped low one.
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw Malformed(offset: index)
                }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw Malformed(offset: index) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw Malformed(offset: index)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw Malformed(offset: index) }
            buffer.append(contentsOf: UTF8.encode(unicode)!)
        default:
            throw Malformed(offset: index - 1)
        }
    }

    private mutating func hex4() throws(Malformed) -> UInt32 {
        guard index + 4 <= bytes.count else { throw Malformed(offset: index) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Malformed(offset: index)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// The text of `raw`, or nil when it is not well-formed UTF-8 (as JSONDecoder requires;
    /// String(decoding:) would repair it silently). ASCII needs no validation.
    private static func validated(_ raw: UnsafeRawBufferPointer) -> String? {
        if raw.allSatisfy({ $0 < 0x80 }) { return String(decoding: raw, as: UTF8.self) }
        return String(validating: raw, as: UTF8.self)
    }

    // MARK: Bytes

    private mutating func take(_ byte: UInt8) throws(Malformed) -> Bool {
        guard index < bytes.count else { throw Malformed(offset: index) }
        guard bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
