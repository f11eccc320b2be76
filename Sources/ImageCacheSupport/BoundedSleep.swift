/// Sleeps for a bound given in seconds, clamped to [0, a year] with NaN as 0.
///
/// Why one place: the waits for a child's exit, a pipe's end and a daemon's start take their
/// bound from their caller as a `Double`, and converting an infinite, negative, NaN or absurd
/// one to nanoseconds would trap. Returns early, without an error, when the task is cancelled.
package func sleep(boundedSeconds seconds: Double) async {
    let bound = seconds.isNaN ? 0 : min(max(0, seconds), 31_536_000)
    try? await Task.sleep(nanoseconds: UInt64(bound * 1_000_000_000))
}
