extension Duration {
    /// Whole milliseconds, truncated and saturating at `Int.max`: the `duration_ms=` of log
    /// lines (a duration measured here, but a log line must never be what traps).
    package var wholeMilliseconds: Int {
        let (milliseconds, overflow) = components.seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return components.seconds < 0 ? .min : .max }
        let (total, overflowAgain) = milliseconds.addingReportingOverflow(components.attoseconds / 1_000_000_000_000_000)
        return overflowAgain ? (milliseconds < 0 ? .min : .max) : Int(truncatingIfNeeded: total)
    }
}
