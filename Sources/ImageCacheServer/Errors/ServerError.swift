import ImageCacheKit

/// What the server itself refuses or ends, as opposed to what the engine throws: a request it
/// will not start (an unknown method, a full session, a duplicate id, a daemon shutting down),
/// a prefetch queue that is full, a slot's request that a newer one replaced, a queued
/// prefetch withdrawn by the client, a layout of a photo nobody returned, a `cache.clear` by
/// a requester who may not empty the cache.
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
        /// A `layout` photo id (at `photos[index]`) with neither decoded nor remembered dimensions.
        case unknownLayoutPhoto(id: String, index: Int)
        /// A whole-cache `cache.clear` by a requester who is neither root, the daemon's user nor
        /// a member of `admin_group`: their uid (nil when it could not be read) and the group.
        case cacheClearForbidden(uid: UInt32?, adminGroup: String?)
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
        case .unknownLayoutPhoto: .notFound
        case .cacheClearForbidden: .forbidden
        }
    }

    /// `data.field`: the param at fault, for a layout's unknown photo; nil for the others.
    var field: String? {
        switch refusal {
        case .unknownLayoutPhoto(_, let index): "photos[\(index)]"
        default: nil
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
        case .unknownLayoutPhoto(let id, let index):
            "unknown photo id '\(id)' (photos[\(index)]): layout places only photos a search returned"
        case .cacheClearForbidden(let uid, let adminGroup):
            "emptying the whole cache needs root, the daemon's user (uid \(PeerIdentity.daemonUID))"
                + (adminGroup.map { " or a member of admin_group \"\($0)\"" } ?? "") + "; "
                + (uid.map { "you are uid \($0)" } ?? "the daemon could not read who you are")
                + ". cache.evict of one image is open to all"
        }
    }
}
