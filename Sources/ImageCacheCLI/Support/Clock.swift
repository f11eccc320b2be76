import Dispatch

/// Monotonic seconds, for rates, ETAs and redraw throttling (never the wall clock, which
/// can jump).
public enum MonotonicClock {
    /// Seconds since an arbitrary fixed point.
    public static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1_000_000_000
    }
}
