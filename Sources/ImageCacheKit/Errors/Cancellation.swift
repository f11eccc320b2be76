import ImageCacheProtocol

/// The one error for work that stopped because nobody wants it any more: the engine's every
/// cancelled transfer, wait, fetch, verification, download and search throws this value, and
/// the server puts it on the wire as `cancelled` (1007) with `data.reason`.
package struct Cancellation: EngineError, Hashable {
    /// Why it stopped, as `data.reason` says it: `cancelled` (the client or its task),
    /// `recycled` (a grid reused the slot), `superseded` (a newer search on the channel),
    /// `session_closed`, `shutdown` (the daemon is stopping).
    package var reason: String
    /// What was stopped: it decides the message.
    package var subject: Subject

    /// The things the engine stops, each with what its message names.
    package enum Subject: Sendable, Hashable {
        /// A client's request (its task was cancelled, or the fetch it waited for was abandoned).
        case request
        /// A wait on a transfer that goes on for its other waiters.
        case wait
        /// One transfer, by URL (redacted in every text).
        case transfer(url: String)
        /// Every transfer: the transfer engine is shut down.
        case transferEngine
        /// A download job.
        case download
        /// A download's verification; `abandoned` when its job gave up on it first.
        case verification(abandoned: Bool)
        /// A search, or a page of one.
        case search
        /// A search replaced by a newer one on its channel.
        case superseded(channel: String)
        /// A search whose session closed.
        case session
    }

    /// A cancellation of `subject` for `reason`.
    public init(_ subject: Subject, reason: String = "cancelled") {
        self.subject = subject
        self.reason = reason
    }

    /// A client's request, cancelled.
    public static let request = Cancellation(.request)

    /// The transfer engine stopped with the daemon.
    public static let shutdown = Cancellation(.transferEngine, reason: "shutdown")

    public var kind: ErrorKind { .cancelled }

    /// Whether the daemon's shutdown stopped it (a download then stays resumable).
    package var isShutdown: Bool { reason == "shutdown" }

    /// The message for a person (URLs redacted).
    public var description: String {
        switch subject {
        case .request: return "the request was cancelled"
        case .wait: return "wait cancelled"
        case .transfer(let url): return "transfer cancelled: \(URLRedaction.redact(url))"
        case .transferEngine: return "the transfer engine is shut down"
        case .download: return "the download was cancelled"
        case .verification(let abandoned):
            return abandoned ? "the download's verification was abandoned" : "the download's verification was cancelled"
        case .search: return "search cancelled"
        case .superseded(let channel): return "superseded by a newer search on channel '\(channel)'"
        case .session: return "session closed"
        }
    }
}
