/// Tells whether a session is *flinging* (docs/protocol.md, "thumbnail.show"): it has recycled at least `threshold`
/// still-loading slots within the last `window`.
///
/// A fling makes most slots scroll past before their image could be drawn; holding new
/// network requests for a short dwell while it lasts lets those slots be recycled before
/// they cost any bytes. A calm scroll or a first screen recycles nothing still loading, so it
/// is never held.
///
/// A value type over any instant type, with every instant passed in: the daemon feeds it
/// `ContinuousClock` readings, and unit tests feed it instants of their own choosing, so the
/// definition is tested exactly, without waiting.
struct FlingDetector<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration, Instant: Sendable {
    /// How far back recycles count (250 ms: docs/protocol.md, "thumbnail.show", Flings).
    let window: Duration
    /// How many recycles of loading slots within `window` make a fling (3, by the same rule).
    let threshold: Int
    /// Recycle instants within the window (oldest first), as last pruned.
    private var recycles: [Instant] = []

    /// The protocol's definition: 3 recycles of still-loading slots within 250 ms.
    init(window: Duration = .milliseconds(250), threshold: Int = 3) {
        precondition(threshold >= 1, "a fling needs at least one recycle")
        self.window = window
        self.threshold = threshold
    }

    /// Notes that a still-loading slot was recycled at `now` (instants come in order).
    mutating func recordRecycle(at now: Instant) {
        prune(now)
        recycles.append(now)
    }

    /// Whether the session flings at `now`.
    func isFlinging(at now: Instant) -> Bool {
        flingEnd(at: now) != nil
    }

    /// When the fling going on at `now` ends if no further slot is recycled (the instant the
    /// recycle that is `threshold`-th from the newest leaves the window); nil when the session
    /// is not flinging at `now`.
    func flingEnd(at now: Instant) -> Instant? {
        let recent = recycles.filter { $0.advanced(by: window) > now && $0 <= now }
        guard recent.count >= threshold else { return nil }
        return recent[recent.count - threshold].advanced(by: window)
    }

    /// Drops recycles that left the window: the detector stays small however long a session
    /// scrolls.
    private mutating func prune(_ now: Instant) {
        // Few entries (what fits in one window), so an array's front removal is cheap.
        if let keep = recycles.firstIndex(where: { $0.advanced(by: window) > now }) {
            recycles.removeFirst(keep)
        } else {
            recycles.removeAll(keepingCapacity: true)
        }
    }
}
