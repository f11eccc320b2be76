import ImageCacheProtocol

/// Why a transfer did not deliver: the facts, as fields, that the server's wire mapping turns
/// into `forbidden`, `busy`, `timeout`, `too_large`, `network_unavailable`, `not_found`,
/// `rate_limited`, `upstream_error` (with `data.status`, `data.body`, `data.retryAfter`) or
/// `internal`. The URL is kept as requested and redacted in every text.
public struct TransferError: EngineError, Hashable {
    /// What went wrong.
    public indirect enum Failure: Sendable, Hashable {
        /// The URL policy refused the URL: not a URL at all.
        case notFetchable
        /// `http` while `allow_http = false`.
        case httpNotAllowed
        /// A scheme other than https and http.
        case schemeNotAllowed(String)
        /// A host that no `allowed_hosts` entry matches.
        case hostNotAllowed(String)
        /// The transfer queue holds `waiting` transfers already.
        case queueFull(waiting: Int)
        /// The engine stopped it from inside a callback (`AbortReason`).
        case aborted(AbortReason)
        /// curl could not connect (`text` is curl's).
        case cannotConnect(String)
        /// curl timed out.
        case timedOut(String)
        /// The connection failed while sending or receiving.
        case connectionFailed(String)
        /// The body ended before its announced length.
        case truncated(String)
        /// A protocol curl may not speak here, refused before a request was sent.
        case protocolNotAllowed(String)
        /// The host's answer was not well-formed HTTP (an HTTP/0.9 or garbage reply, no answer
        /// at all, a broken chunked or content encoding): the host answered badly, so it is
        /// `upstream_error`, never `forbidden` (no policy refused anything).
        case malformedAnswer(String)
        /// curl's own redirect limit.
        case curlRedirectLimit
        /// Any other curl failure.
        case otherCurl(String)
        /// A final HTTP status that is not a success (image transfers map it); the start of its
        /// body, and the server's `Retry-After` in seconds (clamped) when it sent one.
        case status(Int, excerpt: String?, retryAfter: Double?)
        /// A body whose size is not the one announced, past the retries.
        case wrongSize(String)
        /// More redirects than `limit`.
        case tooManyRedirects(limit: Int)
        /// A redirect the URL policy refused.
        case redirectRefused(TransferError)
        /// A redirect back to a URL already in the chain.
        case redirectLoop
        /// The engine itself failed (not the outside's fault).
        case engine(String)
    }

    /// What went wrong.
    public var failure: Failure
    /// The URL it is about, as requested; nil when none is (a full queue, a broken engine).
    public var url: String?
    /// Secret values (API keys) to redact from every text besides what `URLRedaction` finds
    /// by name: a provider's, once its client has seen the error (`ProviderErrors.scrub`).
    package var secrets: [String] = []

    /// An error for `failure` on `url`.
    public init(_ failure: Failure, url: String? = nil) {
        self.failure = failure
        self.url = url
    }

    public var kind: ErrorKind {
        switch failure {
        case .notFetchable, .httpNotAllowed, .schemeNotAllowed, .hostNotAllowed, .protocolNotAllowed, .redirectRefused:
            return .forbidden
        case .queueFull: return .busy
        case .aborted(let reason):
            switch reason {
            case .tooLarge: return .tooLarge
            case .stalled, .deadline: return .timeout
            case .refusedAddress: return .forbidden
            case .diskFailure(_, let code): return StorageFailure.kind(errno: code)
            case .outOfDescriptors: return .busy
            case .rangeMismatch: return .upstreamError
            }
        case .cannotConnect, .connectionFailed, .otherCurl: return .networkUnavailable
        case .timedOut: return .timeout
        case .truncated, .malformedAnswer, .curlRedirectLimit, .wrongSize, .tooManyRedirects, .redirectLoop: return .upstreamError
        case .status(let status, _, _):
            switch status {
            case 404, 410: return .notFound
            case 429: return .rateLimited
            default: return .upstreamError
            }
        case .engine: return .internal
        }
    }

    /// The HTTP status, for a status failure.
    public var status: Int? {
        if case .status(let status, _, _) = failure { return status }
        return nil
    }

    /// Whether the host answered with something that is not well-formed HTTP: like a 5xx,
    /// the host failing on its side (a stored search page may stand in for it).
    package var isMalformedAnswer: Bool {
        if case .malformedAnswer = failure { return true }
        return false
    }

    /// The start of the upstream body (redacted), for an `upstream_error` status.
    public var body: String? {
        guard case .status(let status, let excerpt?, _) = failure, status != 404, status != 410, status != 429 else { return nil }
        return redacted(URLRedaction.redact(excerpt))
    }

    /// Seconds to wait before asking again: a 429's, or a 5xx's when the server said.
    package var retryAfter: Double? {
        guard case .status(let status, _, let retryAfter) = failure, status == 429 || status >= 500 else { return nil }
        return retryAfter
    }

    /// The message for a person, every URL and secret redacted.
    public var description: String {
        let at = url.map { ": " + URLRedaction.redact($0) } ?? ""
        let text: String
        switch failure {
        case .notFetchable: text = "not a fetchable URL" + at
        case .httpNotAllowed: text = "http is not allowed (allow_http = false)" + at
        case .schemeNotAllowed(let scheme): text = "scheme \(scheme) is not allowed" + at
        case .hostNotAllowed(let host): text = "host \(host) is not allowed" + at
        case .queueFull(let waiting): text = "the transfer queue is full (\(waiting) waiting)"
        case .aborted(let reason):
            switch reason {
            case .tooLarge(let limit): text = "body exceeds max_image_bytes (\(limit))" + at
            case .stalled(let s): text = "no data for \(s) s (stall_timeout)" + at
            case .deadline(let s): text = "transfer exceeded transfer_timeout (\(s) s)" + at
            case .refusedAddress(let why): text = why + at
            case .diskFailure(let why, _): text = why + at
            case .outOfDescriptors: text = "out of file descriptors (the open-file limit is reached); retry later" + at
            case .rangeMismatch(let what): text = "the server's partial answer does not continue the file (\(what))" + at
            }
        case .cannotConnect(let detail): text = "cannot connect (\(detail))" + at
        case .timedOut(let detail): text = "timed out (\(detail))" + at
        case .connectionFailed(let detail): text = "connection failed (\(detail))" + at
        case .truncated(let detail): text = "truncated body (\(detail))" + at
        case .protocolNotAllowed(let detail): text = "protocol not allowed (\(detail))" + at
        case .malformedAnswer(let detail): text = "the host's answer is not well-formed HTTP (\(detail))" + at
        case .curlRedirectLimit: text = "too many redirects" + at
        case .otherCurl(let detail): text = "transfer failed (\(detail))" + at
        case .status(let status, _, _): text = "HTTP \(status)" + at
        case .wrongSize(let reason): text = reason + at
        case .tooManyRedirects(let limit): text = "more than \(limit) redirects" + at
        case .redirectRefused(let refusal): text = "redirect refused: \(refusal)"
        case .redirectLoop: text = "redirect loop at " + (url.map(URLRedaction.redact) ?? "")
        case .engine(let what): text = what
        }
        return redacted(text)
    }

    private func redacted(_ text: String) -> String {
        secrets.isEmpty ? text : URLRedaction.redact(text: text, secrets: secrets)
    }
}
