import ImageCacheProtocol

/// Paces the requests to one provider so the daemon never hammers it, and stops asking while
/// the provider has said its quota is spent.
///
/// A token bucket (`burst` requests at once, then `perSecond`) makes a request wait for its
/// turn rather than fail; after a quota answer (429, Unsplash's 403, remaining = 0) requests
/// fail at once with `rate_limited` and the seconds left, without reaching the provider, until
/// the provider's window should have reset.
public actor RateLimiter {
    private let clock: any SchedulingClock
    private let burst: Double
    private let perSecond: Double
    private var tokens: Double
    private var refilledAt: Duration
    private var blockedUntil: Duration?
    private let provider: ProviderID

    /// How long to stop asking after a quota answer that gave no reset time.
    public static let defaultBlock: Duration = .seconds(60)

    public init(provider: ProviderID, burst: Int = 5, perSecond: Double = 5, clock: any SchedulingClock = ContinuousSchedulingClock()) {
        self.provider = provider
        self.clock = clock
        self.burst = Double(max(1, burst))
        self.perSecond = max(0.001, perSecond)
        self.tokens = Double(max(1, burst))
        self.refilledAt = clock.now
    }

    /// Waits for a turn. Throws `rate_limited` at once while the quota is known to be spent,
    /// and `CancellationError` if the caller is cancelled while waiting.
    public func acquire() async throws {
        while true {
            let now = clock.now
            if let until = blockedUntil {
                if now < until {
                    throw ProviderErrors.rateLimited(provider, retryAfter: Self.seconds(until - now))
                }
                blockedUntil = nil
            }
            refill(now)
            if tokens >= 1 {
                tokens -= 1
                return
            }
            let wait = Duration.seconds((1 - tokens) / perSecond)
            try await clock.sleep(for: wait)
        }
    }

    /// Records a quota answer: no request goes out for `retryAfter` seconds (or
    /// `defaultBlock` when unknown), clamped to `OutsideSeconds.cap` whatever the provider said.
    public func block(retryAfter: Double?) {
        let span = retryAfter.map(OutsideSeconds.duration) ?? Self.defaultBlock
        let until = clock.now + span
        if blockedUntil.map({ $0 < until }) ?? true { blockedUntil = until }
    }

    /// Seconds until requests may go out again, nil when they may now.
    public func retryAfter() -> Double? {
        guard let until = blockedUntil, clock.now < until else { return nil }
        return Self.seconds(until - clock.now)
    }

    private func refill(_ now: Duration) {
        let elapsed = Self.seconds(now - refilledAt)
        tokens = min(burst, tokens + elapsed * perSecond)
        refilledAt = now
    }

    static func seconds(_ d: Duration) -> Double {
        let c = d.components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
    }
}
