import CoreMetrics

extension Timer {
    /// Records the time since `start` on the continuous clock: CoreMetrics only takes
    /// nanoseconds, and its `measure` helpers (in the `Metrics` module) use `DispatchTime`.
    /// Saturates rather than trapping on a span too long for 64-bit nanoseconds.
    package func recordInterval(since start: ContinuousClock.Instant) {
        let (seconds, attoseconds) = (ContinuousClock.now - start).components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let nanoseconds = overflow ? Int64.max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
        recordNanoseconds(max(0, nanoseconds))
    }
}
