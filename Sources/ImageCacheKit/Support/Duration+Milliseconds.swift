extension Duration {
    /// Whole milliseconds, truncated: the `duration_ms=` of log lines (a duration measured
    /// here, never an outside number, so it cannot overflow in any realistic run).
    public var wholeMilliseconds: Int {
        Int(components.seconds) * 1000 + Int(components.attoseconds / 1_000_000_000_000_000)
    }
}
