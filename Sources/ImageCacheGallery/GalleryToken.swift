/// The secret that makes a gallery's URL its only key: 32 random bytes from the system's
/// cryptographic generator, written as 64 hex digits in the URL's first path segment.
///
/// Loopback is shared by every user and every web page on the machine (a page can make the
/// browser request `http://127.0.0.1:PORT/…`), so binding to 127.0.0.1 alone is not access
/// control: a request must also know this token, which only the terminal that started the
/// gallery printed.
public struct GalleryToken: Sendable, Equatable, CustomStringConvertible {
    /// The token as it appears in the URL.
    public let text: String

    /// A fresh random token.
    public init() {
        var generator = SystemRandomNumberGenerator()
        var hex = ""
        for _ in 0..<4 {
            let word = generator.next() as UInt64
            let digits = String(word, radix: 16)
            hex += String(repeating: "0", count: 16 - digits.count) + digits
        }
        text = hex
    }

    /// A given token (tests; a token shorter than 16 characters is refused, it could be guessed).
    public init?(_ text: String) {
        guard text.utf8.count >= 16, text.utf8.allSatisfy({ Self.isURLSafe($0) }) else { return nil }
        self.text = text
    }

    /// Compares `candidate` with the token in time that depends only on the token's length,
    /// so the answer's timing does not tell a guesser how many leading characters were right.
    public func matches<S: Sequence>(_ candidate: S) -> Bool where S.Element == UInt8 {
        let expected = Array(text.utf8)
        var difference: UInt8 = 0
        var count = 0
        for byte in candidate {
            if count < expected.count {
                difference |= byte ^ expected[count]
            } else {
                difference |= 1
            }
            count &+= 1
            if count > expected.count &+ 1 { break }   // a huge candidate costs no more than the token
        }
        return difference == 0 && count == expected.count
    }

    /// Never the token itself: a token printed by accident in a log must not open the gallery.
    public var description: String { "GalleryToken(…)" }

    private static func isURLSafe(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}
