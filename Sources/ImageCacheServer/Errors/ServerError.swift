import ImageCacheKit

/// What the server itself refuses or ends, as opposed to what the engine throws: a request it
/// will not start (an unknown method, a full session, a duplicate id, a daemon shutting down),
/// a prefetch queue that is full, a slot's request that a newer one replaced, a queued
/// prefetch withdrawn by the client.
///
/// Typed like the engine's errors (it is an `EngineError`, so `engineKind` and
/// `isCancellation` answer for it wherever it meets the engine's helpers) and put on the wire
/// by the same mapping (`WireErrorMapping`), through the one place answers leave (`Answer`).
/// Its texts are the server's own words and the client's (a method name, a request id), so
/// they are sent as they are.
struct ServerError: EngineError, Hashable {
    /// What was refused or ended: it decides the kind, the message and `data.reason`.
    enum Refusal: Sendable, Hashable {
        /// A request for a method the router does not have.
        case unknownMethod(String)
        /// A request over the session's `max_pending_per_session`.
        case pendingCap(Int)
        /// A request that arrived while the daemon drains its sessions to stop.
        case shuttingDown
        /// A request whose id is already pending on its connection.
        case duplicateID(RequestID?)
        /// A `prefetch` whose new items would pass the session's queue cap.
        case prefetchQueueFull(queued: Int, cap: Int)
        /// A `thumbnail.show` whose slot was recycled or shown again.
        case slotRecycled
        /// A queued prefetch item withdrawn by `prefetch.cancel`.
        case prefetchCancelled
    }

    /// What was refused.
    var refusal: Refusal

    init(_ refusal: Refusal) {
        self.refusal = refusal
    }

    /// The contract's kind (docs/protocol.md, "Errors").
    var kind: ErrorKind {
        switch refusal {
        case .unknownMethod: .methodNotFound
        case .pendingCap, .shuttingDown, .prefetchQueueFull: .busy
        case .duplicateID: .invalidRequest
        case .slotRecycled, .prefetchCancelled: .cancelled
        }
    }

    /// `data.reason` of a cancellation; nil for every other refusal.
    var reason: String? {
        switch refusal {
        case .slotRecycled: "recycled"
        case .prefetchCancelled: "cancelled"
        default: nil
        }
    }

    /// The message a client reads.
    var description: String {
        switch refusal {
        case .unknownMethod(let method):
            "unknown method \"\(method)\""
        case .pendingCap(let cap):
            "too many pending requests on this connection (max_pending_per_session = \(cap))"
        case .shuttingDown:
            "the daemon is shutting down"
        case .duplicateID(let id):
            "a request with id \(id.map { "\($0)" } ?? "null") is already pending on this connection"
        case .prefetchQueueFull(let queued, let cap):
            "too many queued prefetches on this connection (\(queued) queued, max_pending_per_session = \(cap))"
        case .slotRecycled:
            "the slot was recycled"
        case .prefetchCancelled:
            "the prefetch was cancelled"
        }
    }
}
