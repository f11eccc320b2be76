/// The fleet's shared tier as the engine sees it: a key-value store several daemons reach
/// (memcached through its meta protocol, in `[shared] servers`), consulted after the local
/// disk and before the network.
///
/// Why a protocol in the engine: the lookup order, the fleet's one-fetcher claims, shared
/// search pages and fleet-wide provider budgets are engine decisions, while the client that
/// speaks to memcached lives on an event loop the engine does not own. The engine depends on
/// this small surface only, so a daemon without a tier passes `nil` and behaves exactly as
/// before.
///
/// Every call is best effort and bounded: a node that is down, slow, refusing or ejected makes
/// the call answer `.unavailable`, `false` or `nil` within the configured per-operation timeout.
/// None throws, so a failing tier can never become a client-visible error. Values are opaque
/// bytes; their framing (a versioned header, a checksum) and their verification are the
/// caller's, because a value read from a shared server is outside input like any other.
public protocol SharedStore: Sendable {
    /// Reads `key`. With `claim` set, a miss also asks to become the fleet's one fetcher for
    /// that long (meta `mg` with the `N` vivify flag): the answer says whether this host won
    /// (`.claimed`: fetch, then `store`) or another host holds the claim (`.fetchingElsewhere`:
    /// wait for the value, bounded).
    func lookup(_ key: String, claim: Duration?) async -> SharedLookup

    /// Stores `value` under `key` for `ttl` (meta `ms`); `false` when it was not stored (larger
    /// than the server's item size, or the node unavailable). Storing also ends a claim.
    @discardableResult
    func store(_ key: String, _ value: [UInt8], ttl: Duration) async -> Bool

    /// Deletes `key` (meta `md`): drops a value that failed verification, or releases a claim
    /// this host will not fulfil, so another host need not wait for it to expire.
    func remove(_ key: String) async

    /// Adds one to the counter `key`, creating it at 1 with a lifetime of `window` when it does
    /// not exist (meta `ma` with `N`), and returns the count after this use; `nil` when the
    /// node is unavailable. A fixed-window counter: the fleet-wide provider budgets.
    func increment(_ key: String, window: Duration) async -> UInt64?
}

/// What a shared-tier read found.
public enum SharedLookup: Sendable, Equatable {
    /// The value, unverified.
    case hit([UInt8])
    /// No value, and no claim was asked for.
    case miss
    /// No value; this host now holds the fleet's claim to fetch it.
    case claimed
    /// No value; another host holds the claim and is fetching it.
    case fetchingElsewhere
    /// The node for this key is down, slow or ejected: behave as without a tier.
    case unavailable
}
