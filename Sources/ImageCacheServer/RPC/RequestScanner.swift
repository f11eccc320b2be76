import ImageCacheProtocol
#if canImport(Glibc)
import Glibc
#endif

/// One pass over a request line in its plain form, straight to typed values.
///
/// Why: for a memory-hit `thumbnail.show`, the request a grid client sends most, building a
/// `JSONValue` tree (a dictionary per object, a `String` per key) and reading it back through
/// the strict decoder was about a tenth of the daemon's CPU per answer (perf,
/// docs/benchmarks.md). The scanner reads only the plain form: strings of printable ASCII
/// (values may use JSON's two-character escapes; keys may not), integers without fraction or
/// exponent, `true`/`false`, each member once. Anything else (`\u`, a byte outside ASCII,
/// `1.0`, a null, a repeated or unknown member) makes it decline with nil, and the line takes
/// the general path (`IncomingMessageParser`, then `StrictParamsDecoder`), so every error and
/// its wording still come from one place.
/// Whitespace between tokens is JSON's and is skipped. A differential test holds the two
/// paths to the same request wherever the scanner accepts.
struct RequestScanner {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Whether nothing but whitespace is left.
    mutating func atEnd() -> Bool {
        skipWhitespace()
        return index == bytes.count
    }

    /// Reads an object, calling `member` with each key's bytes; `member` reads the value and
    /// returns false to decline. False when the object is not well formed or was declined.
    mutating func object(_ member: (inout RequestScanner, UnsafeRawBufferPointer) -> Bool) -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        if take(UInt8(ascii: "}")) { return true }
        while true {
            guard let key = plainStringBytes(), take(UInt8(ascii: ":")), member(&self, key) else { return false }
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}"))
        }
    }

    /// A string of printable ASCII, with JSON's two-character escapes (`\/`, which
    /// `JSONEncoder` writes in every URL, `\"`, `\\`, `\n`, ...); nil for anything else
    /// (`\u`, a control character, a byte outside ASCII).
    mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        // First the extent and the escapes' count, then one allocation for the text.
        let start = index
        var escapes = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return escapes == 0 ? String(decoding: raw, as: UTF8.self) : Self.unescaped(raw, count: raw.count - escapes)
            case UInt8(ascii: "\\"):
                guard index + 1 < bytes.count, Self.escaped(bytes[index + 1]) != nil else { return nil }
                escapes += 1
                index += 2
            case 0x20..<0x7F:
                index += 1
            default:
                return nil
            }
        }
        return nil
    }

    /// `raw` (checked: printable ASCII and valid two-character escapes) with its escapes
    /// replaced, written straight into the string's storage.
    private static func unescaped(_ raw: UnsafeRawBufferPointer, count: Int) -> String {
        String(unsafeUninitializedCapacity: count) { text in
            var from = 0, to = 0
            while from < raw.count {
                if raw[from] == UInt8(ascii: "\\") {
                    text[to] = escaped(raw[from + 1])!
                    from += 2
                } else {
                    text[to] = raw[from]
                    from += 1
                }
                to += 1
            }
            return to
        }
    }

    /// What a two-character escape stands for; nil for `\u` (left to the general path) and
    /// for what JSON does not define.
    private static func escaped(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): byte
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }

    /// An integer in JSON's plain form (`0`, `-12`), of at most 18 digits so it cannot
    /// overflow; nil otherwise (`-0`, `1.0`, `1e2` and longer numbers take the general path).
    mutating func integer() -> Int? {
        skipWhitespace()
        var position = index
        let negative = position < bytes.count && bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        let first = position
        var value = 0
        while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
            guard position - first < 18 else { return nil }
            value = value * 10 + Int(bytes[position] - UInt8(ascii: "0"))
            position += 1
        }
        let digits = position - first
        guard digits > 0, digits == 1 || bytes[first] != UInt8(ascii: "0") else { return nil }
        guard !(negative && value == 0) else { return nil }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") || bytes[position] | 0x20 == UInt8(ascii: "e") {
            return nil
        }
        index = position
        return negative ? -value : value
    }

    /// Skips an object whatever it holds, returning where it lies in the line: a member read
    /// before the envelope says how to read it (`params` before `method`) is read afterwards.
    /// It only finds the end (brackets counted outside strings, at most 8 deep, printable
    /// ASCII); reading the range afterwards checks all of it, so a line this misjudges is
    /// declined there.
    mutating func skipObject() -> Range<Int>? {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        let start = index
        var depth = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < 8 else { return nil }
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return start..<index }
            case UInt8(ascii: "\""):
                // A string: to its closing quote, over escapes.
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    guard bytes[index] >= 0x20, bytes[index] < 0x7F else { return nil }
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard index < bytes.count else { return nil }
                index += 1
            case 0x20..<0x7F, 0x09, 0x0A, 0x0D:
                break
            default:
                return nil
            }
        }
        return nil
    }

    /// Whether the next token is the plain string `text`.
    mutating func string(equals text: StaticString) -> Bool {
        guard let read = plainStringBytes() else { return false }
        return Self.key(read, is: text)
    }

    /// A member's value when it is a plain string, integer or boolean (the forms above); nil
    /// for anything else (a null, an object, an array, a number with a fraction).
    mutating func scalar() -> ScannedScalar? {
        skipWhitespace()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""): return string().map(ScannedScalar.string)
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return bool().map(ScannedScalar.bool)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer().map(ScannedScalar.integer)
        default: return nil
        }
    }

    /// `true` or `false`; nil otherwise.
    mutating func bool() -> Bool? {
        if literal("true") { return true }
        if literal("false") { return false }
        return nil
    }

    /// Reads a member's value into `value` unless it already holds one (a repeated member):
    /// false when it did, or when `read` declines.
    static func once<T>(_ value: inout T?, _ read: () -> T?) -> Bool {
        guard value == nil, let read = read() else { return false }
        value = read
        return true
    }

    /// Whether `key` is exactly `name`.
    static func key(_ key: UnsafeRawBufferPointer, is name: StaticString) -> Bool {
        key.count == name.utf8CodeUnitCount && name.withUTF8Buffer { same(key, UnsafeRawBufferPointer($0)) }
    }

    /// Whether two byte runs are the same: the lengths, then `memcmp`. The one comparison of
    /// keys and names on the scanned path (a generic `elementsEqual` walked both through
    /// iterators: a measurable part of a memory hit's scan).
    @inline(__always)
    static func same(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let left = a.baseAddress, let right = b.baseAddress else { return true }
        return memcmp(left, right, a.count) == 0
    }

    // MARK: Tokens

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        skipWhitespace()
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        guard Self.key(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]), is: word) else { return false }
        // `truex` is not `true`: the literal must end where a token can.
        let next = index + count
        if next < bytes.count {
            switch bytes[next] {
            case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: break
            default: return false
            }
        }
        index = next
        return true
    }

    /// The bytes of a string of printable ASCII with no escape, without its quotes; nil
    /// otherwise (and then where the scanner stands no longer matters: it declines).
    mutating func plainStringBytes() -> UnsafeRawBufferPointer? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                defer { index += 1 }
                return UnsafeRawBufferPointer(rebasing: bytes[start..<index])
            }
            // An escape, a control character or a byte outside ASCII: the general path.
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }
}
