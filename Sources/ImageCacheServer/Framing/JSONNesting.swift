/// A guard that runs before any JSON decoder sees a line.
///
/// Recursive decoders (Foundation's, and every `Decodable` built on them) use stack in
/// proportion to the nesting depth, so `[[[[…]]]]` a million deep could crash the daemon.
/// This scan is linear, allocates nothing and understands strings (brackets inside a
/// string do not count), so it answers "too deep" before recursion starts.
enum JSONNesting {
    /// The deepest nesting the daemon decodes. No request of the contract needs more than a
    /// handful of levels; 64 leaves room for any reasonable extension.
    static let maximumDepth = 64

    /// What the scan found.
    enum Verdict {
        case acceptable
        /// Arrays/objects nest deeper than the limit.
        case tooDeep
        /// A raw control character (U+0000–U+001F) inside a string, which JSON forbids
        /// (RFC 8259 §7) but Foundation's parser lets through.
        case controlCharacterInString
    }

    /// Checks nesting against `limit` and strings for raw control characters. The text need
    /// not be valid JSON otherwise; that is the decoder's business afterwards.
    static func scan(_ bytes: UnsafeRawBufferPointer, limit: Int) -> Verdict {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if byte < 0x20 { return .controlCharacterInString }
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return .tooDeep }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
            default:
                break
            }
        }
        return .acceptable
    }
}
