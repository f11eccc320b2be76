import ImageCacheProtocol

/// Paces the requests to one provider so the daemon never hammers it, and stops asking while
/// the provider has said its quota is spent.
///
/// A token bucket (`burst` requests at once, then `perSecond`) makes a request wait for its
/// turn rather than fail; after a quota answer (429, Unsplash's 403, remaining = 0) requests
/// fail at once with `rate_limited` and the seconds left, without reaching the provider, until
/// the provider's window should have reset.
///
/// With a shared tier, a `FleetBudget` extends both halves to the whole fleet: after the local
/// turn, the request is counted in the fleet's window and refused (`rate_limited`, the seconds
/// to the window's end) once the fleet has spent the provider's budget; a quota answer seen
/// here stops every host until the reset, and one seen elsewhere stops this one. With the tier
/// unavailable, only the local limits apply, as without a tier.
public actor RateLimiter {
    private let clock: any SchedulingClock
    private let burst: Double
    private let perSecond: Double
    private var tokens: Double
    private var refilledAt: Duration
    private var blockedUntil: Duration?
    /// Until when the fleet holds requests back (its budget spent, or a quota answer shared
    /// through the tier), as opposed to this host's own limits.
    private var fleetHeldUntil: Duration?
    private let provider: ProviderID
    /// The fleet-wide budget, nil without a shared tier (or a budget for this provider).
    package nonisolated let fleet: FleetBudget?

    /// How long to stop asking after a quota answer that gave no reset time.
    package static let defaultBlock: Duration = .seconds(60)

    public init(provider: ProviderID, burst: Int = 5, perSecond: Double = 5, clock: any SchedulingClock = ContinuousSchedulingClock(),
                fleet: FleetBudget? = nil) {
        self.provider = provider
        self.fleet = fleet
        self.clock = clock
        self.burst = Double(max(1, burst))
        self.perSecond = max(0.001, perSecond)
        self.tokens = Double(max(1, burst))
        self.refilledAt = clock.now
    }

    /// Waits for a turn. Throws `rate_limited` at once while the quota is known to be spent,
    /// and `CancellationError` if the caller is cancelled while waiting.
    package func acquire() async throws {
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
                try await admitInFleet()
                return
            }
            let wait = Duration.seconds((1 - tokens) / perSecond)
            try await clock.sleep(for: wait)
        }
    }

    /// Records a quota answer: no request goes out for `retryAfter` seconds (or
    /// `defaultBlock` when unknown), clamped to `OutsideSeconds.cap` whatever the provider said;
    /// with a fleet budget, no host of the fleet asks for that long either.
    package func block(retryAfter: Double?) async {
        let span = retryAfter.map(OutsideSeconds.duration) ?? Self.defaultBlock
        holdBack(span)
        if let fleet, await fleet.stop(retryAfter: Self.seconds(span)) { holdBack(span, byFleet: true) }
    }

    /// Whether requests are held back now by the fleet (its budget spent, or a quota answer
    /// shared through the tier) rather than by this host's limits alone: then a stored copy
    /// may answer instead (`SearchCoordinator`). Never true without a reachable tier.
    package func isHeldByFleet() -> Bool {
        fleetHeldUntil.map { clock.now < $0 } ?? false
    }

    /// Counts the request in the fleet's budget; throws `rate_limited` (and holds this host
    /// back locally, so it stops asking the tier too) when the fleet has spent it or is stopped.
    private func admitInFleet() async throws {
        guard let fleet, case .spent(let retryAfter) = await fleet.admit() else { return }
        holdBack(OutsideSeconds.duration(retryAfter), byFleet: true)
        throw ProviderErrors.rateLimited(provider, retryAfter: retryAfter)
    }

    private func holdBack(_ span: Duration, byFleet: Bool = false) {
        let until = clock.now + span
        if blockedUntil.map({ $0 < until }) ?? true { blockedUntil = until }
        if byFleet, fleetHeldUntil.map({ $0 < until }) ?? true { fleetHeldUntil = until }
    }

    /// Seconds until requests may go out again, nil when they may now.
    package func retryAfter() -> Double? {
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
