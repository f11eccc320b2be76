/// The one place where a number of seconds that came from outside (a `Retry-After` header, a
/// provider's `X-RateLimit-Reset`, a daemon's `data.retryAfter` read by a client) becomes a
/// value the program computes with.
///
/// Such a number may be anything a server chose to send: `1e300`, `inf`, `nan`, `-1`,
/// `9223372036854775807`. Converting it with `Int(x)` or `Duration.milliseconds(Int(x * 1000))`
/// traps the runtime (SIGILL) and takes every session down, so every site goes through here
/// instead: the value is clamped to `[0, cap]` and NaN is refused, so what comes out always
/// fits an `Int`, a `Duration` and a JSON number (docs/protocol.md, "Retry-After cap").
public enum OutsideSeconds {
    /// The longest wait any outside number can ask for: one day. A provider's quota window is an
    /// hour at most; anything longer is a broken or hostile server, and after a day asking
    /// again costs one request.
    public static let cap: Double = 86_400

    /// `seconds` made safe: NaN → nil (unreadable), negative → 0, above `cap` (∞ included) → `cap`.
    public static func clamped(_ seconds: Double) -> Double? {
        guard !seconds.isNaN else { return nil }
        return min(max(seconds, 0), cap)
    }

    /// The wait as a `Duration`, to the millisecond, clamped like `clamped(_:)` (NaN → 0).
    public static func duration(_ seconds: Double) -> Duration {
        let safe = clamped(seconds) ?? 0
        return .milliseconds(Int64((safe * 1000).rounded(.up)))
    }

    /// Whole seconds, rounded up, for messages ("retry in 3 s"), clamped like `clamped(_:)`.
    public static func wholeSeconds(_ seconds: Double) -> Int {
        Int((clamped(seconds) ?? 0).rounded(.up))
    }

    /// A number of seconds read from a header value: decimal numbers (`3`, `2.5`, `1e16`, a
    /// run of 400 digits) and `inf`/`infinity`, clamped; nil for NaN, hexadecimal, an empty or
    /// unreadable value. Negative values are refused (nil): no header defines them, and a
    /// server sending `-1` says nothing usable.
    public static func parse(_ value: Substring) -> Double? {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let start = value.firstIndex { !blank($0) } ?? value.endIndex
        let end = value.lastIndex { !blank($0) }.map { value.index(after: $0) } ?? start
        guard start < end else { return nil }
        let text = value[start..<end]
        let decimal = text.utf8.allSatisfy { (0x30...0x39).contains($0) || $0 == 0x2E || $0 == 0x65 || $0 == 0x45 || $0 == 0x2B || $0 == 0x2D }
        guard decimal || ["inf", "+inf", "infinity", "+infinity"].contains(text.lowercased()),
              let number = Double(text), !number.isNaN, number >= 0 else {
            return nil
        }
        return clamped(number)
    }
}
