/// A `Content-Range: bytes A-B/N` value (RFC 9110 §14.4), read strictly: the one parser of
/// this header, pure so it can be fuzzed. A resumed download uses a `206` only when its range
/// starts where the `.part` ends and its total matches what is known (`ContentRange.fits`):
/// anything else would splice a wrong tail onto the partial file.
package struct ContentRange: Sendable, Equatable {
    /// The first byte position (inclusive).
    public var first: Int
    /// The last byte position (inclusive); never below `first`.
    public var last: Int
    /// The complete length, nil for `*` (unknown).
    public var total: Int?

    /// The number of bytes the range covers.
    public var length: Int { last - first + 1 }

    /// Parses `bytes A-B/N` (or `bytes A-B/*`); nil for anything else: another unit, a missing
    /// or reversed range, `bytes */N` (the form of a 416), negative, signed or oversized
    /// numbers, a last position at or past a known total, or (with `*`) a range of more than
    /// `Int.max` bytes (`0-9223372036854775807`), whose `length` would not fit.
    public static func parse(_ value: String?) -> ContentRange? {
        guard let value else { return nil }
        var text = Substring(value).drop { $0 == " " || $0 == "\t" }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        text = text.dropFirst(6).drop { $0 == " " }
        guard let dash = text.firstIndex(of: "-"), let slash = text.firstIndex(of: "/"), dash < slash else { return nil }
        guard let first = number(text[..<dash]), let last = number(text[text.index(after: dash)..<slash]),
              first <= last, last - first < Int.max else { return nil }
        let totalText = text[text.index(after: slash)...].trimmingSpaces()
        if totalText == "*" { return ContentRange(first: first, last: last, total: nil) }
        guard let total = number(totalText), last < total else { return nil }
        return ContentRange(first: first, last: last, total: total)
    }

    /// The complete length `N` of a `Content-Range` value whatever its range part (`bytes
    /// */N` included): a non-negative `Int`, nil for `*`, an absent, negative, oversized or
    /// unreadable value.
    public static func total(of value: String?) -> Int? {
        guard let value, let slash = value.lastIndex(of: "/") else { return nil }
        return number(value[value.index(after: slash)...].trimmingSpaces())
    }

    /// Whether this range is the rest of a body whose first `offset` bytes are on disk: it
    /// starts at `offset`, runs to the end of a known total (`last == total - 1`, as asked
    /// with the open range `bytes=offset-`), that total agrees with `knownTotal` when one is
    /// known, and `contentLength` (when sent) is exactly the range's length.
    package func fits(offset: Int, knownTotal: Int?, contentLength: Int?) -> Bool {
        guard first == offset, let total, last == total - 1 else { return false }
        if let knownTotal, knownTotal != total { return false }
        if let contentLength, contentLength != length { return false }
        return true
    }

    /// A run of ASCII digits as an `Int`; nil when empty, not all digits, or over `Int.max`.
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }
}

private extension Substring {
    func trimmingSpaces() -> Substring {
        var text = self.drop { $0 == " " || $0 == "\t" }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
