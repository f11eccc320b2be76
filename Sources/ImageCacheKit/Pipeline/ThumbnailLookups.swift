import Synchronization

/// How thumbnail requests were answered, one outcome per request: from the memory tier, from
/// the disk tier, from the fleet's shared tier (memcached, verified), by a network fetch this
/// request started, or by joining a fetch another request of this host had started
/// (coalesced; whatever that fetch then found).
///
/// The tiers' own counters count key look-ups: a cold thumbnail tries several keys (the exact
/// width, the provider's width, the width note) in each tier and twice over (the server's
/// inline try, then the task's), so they said "8 memory misses, 2 disk misses" for one
/// request and a hit rate computed from them meant nothing. These are what `stats`
/// (`memory.hits/misses`, `disk.hits/misses`) and the metrics endpoint report.
package final class ThumbnailLookups: Sendable {
    /// One request's outcome.
    public enum Outcome: String, Sendable, CaseIterable {
        /// Answered from the memory tier.
        case memory
        /// Answered from the disk tier (a memory miss).
        case disk
        /// Missed both local tiers and the shared tier, and started a network fetch.
        case network
        /// Missed both local tiers and joined a fetch already running on this host for the
        /// same image and width (formerly called `shared`).
        case coalesced
        /// Missed both local tiers and was answered from the fleet's shared tier.
        case shared
    }

    /// The counts, read at one moment.
    package struct Counts: Sendable, Equatable {
        public var memory = 0
        public var disk = 0
        public var network = 0
        package var coalesced = 0
        package var shared = 0

        /// Requests the memory tier answered.
        package var memoryHits: Int { memory }
        /// Requests the memory tier did not answer (every other outcome).
        package var memoryMisses: Int { disk &+ network &+ coalesced &+ shared }
        /// Requests the disk tier answered (each was a memory miss first).
        package var diskHits: Int { disk }
        /// Requests neither local tier answered: they went to the shared tier or the network,
        /// alone or coalesced.
        package var diskMisses: Int { network &+ coalesced &+ shared }

        /// The count for one outcome.
        public subscript(outcome: Outcome) -> Int {
            switch outcome {
            case .memory: memory
            case .disk: disk
            case .network: network
            case .coalesced: coalesced
            case .shared: shared
            }
        }
    }

    private let memory = Atomic<Int>(0)
    private let disk = Atomic<Int>(0)
    private let network = Atomic<Int>(0)
    private let coalesced = Atomic<Int>(0)
    private let shared = Atomic<Int>(0)

    /// All at zero.
    public init() {}

    /// Counts one request's outcome.
    public func record(_ outcome: Outcome) {
        switch outcome {
        case .memory: memory.add(1, ordering: .relaxed)
        case .disk: disk.add(1, ordering: .relaxed)
        case .network: network.add(1, ordering: .relaxed)
        case .coalesced: coalesced.add(1, ordering: .relaxed)
        case .shared: shared.add(1, ordering: .relaxed)
        }
    }

    /// Every count now.
    public var counts: Counts {
        Counts(memory: memory.load(ordering: .relaxed), disk: disk.load(ordering: .relaxed),
               network: network.load(ordering: .relaxed), coalesced: coalesced.load(ordering: .relaxed),
               shared: shared.load(ordering: .relaxed))
    }
}
