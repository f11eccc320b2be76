/// The time source of debouncing and rate limiting: monotonic elapsed time and a cancellable
/// sleep.
///
/// A protocol rather than a concrete clock so that tests drive time by hand (advance it and
/// see exactly which searches reach the provider) instead of sleeping; production uses
/// `ContinuousSchedulingClock`.
public protocol SchedulingClock: Sendable {
    /// Time since an arbitrary fixed origin; only differences mean anything.
    var now: Duration { get }
    /// Suspends for `duration`; throws `CancellationError` if the task is cancelled meanwhile.
    func sleep(for duration: Duration) async throws
}

/// The real monotonic clock (`ContinuousClock`, which keeps counting during system sleep).
public struct ContinuousSchedulingClock: SchedulingClock {
    private let origin: ContinuousClock.Instant

    public init() { origin = ContinuousClock.now }

    public var now: Duration { origin.duration(to: ContinuousClock.now) }

    public func sleep(for duration: Duration) async throws {
        try await ContinuousClock().sleep(for: duration)
    }
}
