import Foundation
import ImageCacheConfig
import ImageCacheProtocol

/// One provider's request budget counted across the whole fleet in the shared tier, so that
/// adding hosts does not spend one API key's quota once per host.
///
/// The budget is a fixed window aligned on wall-clock time (`floor(now / window)`), counted by
/// memcached's `ma` with autovivify: every host asking in the same window increments the same
/// counter (`budget:<provider>:<window s>:<window index>`, created with a lifetime of the
/// window), and a count above `limit` means the fleet has spent the window's budget; asking
/// again can help at the window's end. Hosts' clocks only need to agree to within a few
/// seconds (NTP): a host running ahead starts the next window early, for that difference.
///
/// A quota answer seen by any host (429, Unsplash's 403, a remaining quota of zero) is written
/// as a stop (`stop:<provider>`, the time it ends, with a lifetime of the time to the reset),
/// which every host reads before asking.
///
/// With the tier unavailable, `admit` answers `.unavailable` and the caller keeps to its local
/// limits only, exactly as a daemon without a tier.
public actor FleetBudget {
    /// What `admit` decided.
    package enum Verdict: Sendable, Equatable {
        /// The request is within the fleet's budget (and counted in it).
        case allowed
        /// The budget is spent or the fleet is stopped: ask again after this many seconds.
        case spent(retryAfter: Double)
        /// The tier cannot say: keep to the local limits.
        case unavailable
    }

    /// A provider's budget as configured (`[providers.NAME] budget`, `budget_window`).
    public struct Settings: Sendable, Equatable {
        /// Requests per window, for the whole fleet; at least 1.
        public var limit: Int
        /// The window; whole seconds, at least one.
        public var window: Duration

        public init(limit: Int, window: Duration) {
            self.limit = max(1, limit)
            self.window = max(window, .seconds(1))
        }

        /// The window in whole seconds (a fraction is dropped), at least one.
        package var windowSeconds: Int64 { max(1, window.components.seconds) }
    }

    /// The provider counted.
    public nonisolated let provider: ProviderID
    /// The budget.
    public nonisolated let settings: Settings
    private let store: any SharedStore
    private let wallClock: @Sendable () -> Date
    private var used: UInt64 = 0
    private var usedWindow: Int64 = -1
    private var stoppedUntil: Double?

    /// A budget counted in `store`; `wallClock` tells the windows (tests move it).
    public init(provider: ProviderID, settings: Settings, store: any SharedStore,
                wallClock: @escaping @Sendable () -> Date = { Date() }) {
        self.provider = provider
        self.settings = settings
        self.store = store
        self.wallClock = wallClock
    }

    /// The window length in whole seconds.
    package nonisolated var windowSeconds: Int64 { settings.windowSeconds }

    /// Asks the fleet for one request: reads the stop, then counts the request in the current
    /// window. Every call is as bounded as the tier's per-operation timeout.
    package func admit() async -> Verdict {
        let now = wallClock().timeIntervalSince1970
        guard now.isFinite, now >= 0 else { return .unavailable }
        switch await store.lookup(stopKey, claim: nil) {
        case .hit(let value):
            if let until = Self.decodeStop(value), until > now {
                stoppedUntil = until
                return .spent(retryAfter: OutsideSeconds.clamped(until - now) ?? 0)
            }
        case .unavailable:
            return .unavailable
        case .miss, .claimed, .fetchingElsewhere:
            break
        }
        stoppedUntil = nil
        let window = windowSeconds
        let index = Int64(now) / window
        guard let count = await store.increment(counterKey(window: index), window: .seconds(window)) else {
            return .unavailable
        }
        used = count
        usedWindow = index
        guard count > UInt64(settings.limit) else { return .allowed }
        let (next, overflow) = (index + 1).multipliedReportingOverflow(by: window)
        let retry = overflow ? OutsideSeconds.cap : Double(next) - now
        return .spent(retryAfter: OutsideSeconds.clamped(retry) ?? 0)
    }

    /// Stops the whole fleet for `retryAfter` seconds (clamped to `OutsideSeconds.cap`, at
    /// least one): a quota answer seen here. Best effort, like every tier call: false when the
    /// tier did not take it.
    @discardableResult
    public func stop(retryAfter: Double) async -> Bool {
        let span = max(1, (OutsideSeconds.clamped(retryAfter) ?? 1).rounded(.up))
        let until = wallClock().timeIntervalSince1970 + span
        guard until.isFinite else { return false }
        let payload = Array(String(until).utf8)
        let stored = await store.store(stopKey, SharedRecordFrame.encode(.fleetStop, payload: payload), ttl: .seconds(Int64(span)))
        if stored { stoppedUntil = max(stoppedUntil ?? 0, until) }
        return stored
    }

    /// The figures for `stats` (`shared.budgets`): `used` reads 0 once its window is over.
    public func figures() -> StatsResult.Shared.Budget {
        let now = wallClock().timeIntervalSince1970
        let current = now.isFinite && now >= 0 ? Int64(now) / windowSeconds : -1
        let stopped = stoppedUntil.flatMap { $0 > now ? $0 : nil }
        return StatsResult.Shared.Budget(used: current == usedWindow ? Int(clamping: used) : 0, limit: settings.limit,
                                         windowSeconds: Int(windowSeconds), stoppedUntil: stopped)
    }

    /// The key of the fleet's stop for this provider.
    package nonisolated var stopKey: String { "stop:" + provider.rawValue }

    /// The key of the counter of window `index`.
    package nonisolated func counterKey(window index: Int64) -> String {
        "budget:\(provider.rawValue):\(windowSeconds):\(index)"
    }

    /// The end of a stop from its value (seconds since 1970), nil unless it is a stop frame
    /// holding a finite, non-negative decimal number.
    static func decodeStop(_ value: [UInt8]) -> Double? {
        guard let payload = SharedRecordFrame.decode(value, as: .fleetStop), payload.count <= 64,
              let until = Double(String(decoding: payload, as: UTF8.self)), until.isFinite, until >= 0 else { return nil }
        return until
    }
}

extension CacheConfiguration.Provider {
    /// The fleet budget, nil when `budget` is 0. Beside the budget rather than in the
    /// configuration, which holds the plain figures and knows nothing of the fleet.
    package var fleetBudget: FleetBudget.Settings? {
        budget > 0 ? FleetBudget.Settings(limit: budget, window: budgetWindow) : nil
    }
}

extension StatsResult.Shared.Budget {
    /// A budget as configured, none of it used: what `stats` shows before the first request.
    package init(_ settings: FleetBudget.Settings) {
        self.init(used: 0, limit: settings.limit, windowSeconds: Int(settings.windowSeconds), stoppedUntil: nil)
    }
}
