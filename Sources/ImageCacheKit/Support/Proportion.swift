/// Proportional sizes from numbers a provider sent (`width`, `height` in its JSON), without
/// a trap: `Int(Double(height) * w / width)` traps when the quotient is infinite (a zero
/// width), NaN or beyond `Int` (a height of 2^63−1), and a hostile or broken answer may hold
/// any of those. Every decoder scales through here; what cannot be a size is nil ("unknown").
package enum Proportion {
    /// The largest side a size may have: far beyond any real image, far below overflow.
    package static let maxSide = 1 << 31

    /// `value × numerator / denominator`, rounded, or nil when an input is not positive or the
    /// result is not a size in `1...maxSide`.
    package static func rescale(_ value: Int, numerator: Int, denominator: Int) -> Int? {
        guard value > 0, numerator > 0, denominator > 0 else { return nil }
        return size(Double(value) * Double(numerator) / Double(denominator))
    }

    /// `value × factor`, rounded, or nil when the result is not a size in `1...maxSide`.
    public static func scale(_ value: Int, by factor: Double) -> Int? {
        guard value > 0 else { return nil }
        return size(Double(value) * factor)
    }

    private static func size(_ exact: Double) -> Int? {
        guard exact.isFinite else { return nil }
        let rounded = max(1, exact.rounded())
        return rounded <= Double(maxSide) ? Int(rounded) : nil
    }
}
