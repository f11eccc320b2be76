import CCurl
import ImageCacheProtocol

/// Why the engine itself stopped a transfer from inside a callback; the curl code that
/// follows (a write error, an aborted callback, a refused socket) only says *that* it stopped.
enum AbortReason: Equatable {
    case tooLarge(limit: Int)
    case stalled(seconds: Double)
    case deadline(seconds: Double)
    case refusedAddress(String)
    /// A body or partial file could not be opened or written; `errno` decides the kind.
    case diskFailure(String, errno: Int32)
    /// The socket could not be opened: the process is out of descriptors (EMFILE/ENFILE).
    case outOfDescriptors
    /// A `206` whose `Content-Range` does not continue the partial file (what was asked and
    /// what came): the engine starts the file over rather than splice a wrong tail onto it.
    case rangeMismatch(String)
}

/// Maps what curl and the server said to the contract's error kinds, and says which
/// failures are worth a retry.
enum TransferFailure {
    /// The error for an aborted transfer (never retried: each reason is final).
    static func error(for reason: AbortReason, url: String) -> RPCError {
        let where_ = URLRedaction.redact(url)
        switch reason {
        case .tooLarge(let limit): return RPCError(.tooLarge, "body exceeds max_image_bytes (\(limit)): \(where_)")
        case .stalled(let s): return RPCError(.timeout, "no data for \(s) s (stall_timeout): \(where_)")
        case .deadline(let s): return RPCError(.timeout, "transfer exceeded transfer_timeout (\(s) s): \(where_)")
        case .refusedAddress(let why): return RPCError(.forbidden, "\(why): \(where_)")
        case .diskFailure(let why, let code): return RPCError(StorageFailure.kind(errno: code), "\(why): \(where_)")
        case .outOfDescriptors:
            return RPCError(.busy, "out of file descriptors (the open-file limit is reached); retry later: \(where_)")
        case .rangeMismatch(let what):
            return RPCError(.upstreamError, "the server's partial answer does not continue the file (\(what)): \(where_)")
        }
    }

    /// Whether curl's `code` may hide a socket (or the resolver's socket pair) refused for want
    /// of descriptors, so the engine checks before calling the network down.
    static func mayBeDescriptorShortage(_ code: CURLcode) -> Bool {
        [CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_OUT_OF_MEMORY,
         CURLE_FAILED_INIT, CURLE_RECV_ERROR, CURLE_SEND_ERROR].contains(code)
    }

    /// The error for a curl failure code, and whether a retry may help.
    static func error(for code: CURLcode, url: String, detail: String) -> (RPCError, retryable: Bool) {
        let where_ = URLRedaction.redact(url)
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return (RPCError(.networkUnavailable, "cannot connect (\(text)): \(where_)"), true)
        case CURLE_OPERATION_TIMEDOUT:
            return (RPCError(.timeout, "timed out (\(text)): \(where_)"), true)
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return (RPCError(.networkUnavailable, "connection failed (\(text)): \(where_)"), true)
        case CURLE_PARTIAL_FILE:
            return (RPCError(.upstreamError, "truncated body (\(text)): \(where_)"), true)
        case CURLE_UNSUPPORTED_PROTOCOL:
            return (RPCError(.forbidden, "protocol not allowed (\(text)): \(where_)"), false)
        case CURLE_TOO_MANY_REDIRECTS:
            return (RPCError(.upstreamError, "too many redirects: \(where_)"), false)
        default:
            return (RPCError(.networkUnavailable, "transfer failed (\(text)): \(where_)"), false)
        }
    }

    /// The error for a final HTTP status of an image transfer (`StatusHandling.mapErrors`).
    static func error(forStatus status: Int, url: String, excerpt: [UInt8], retryAfter: Double?) -> RPCError {
        let where_ = URLRedaction.redact(url)
        switch status {
        case 404, 410:
            return RPCError(.notFound, "HTTP \(status): \(where_)", status: status)
        case 429:
            return RPCError(.rateLimited, "HTTP \(status): \(where_)", status: status,
                            retryAfter: retryAfter.flatMap(OutsideSeconds.clamped))
        default:
            // A 5xx (503 included) is the host failing, not a quota: `upstream_error` with the
            // status, and the server's `Retry-After` when it sent one (docs/protocol.md, "Errors").
            let body = String(decoding: excerpt.prefix(512), as: UTF8.self)
            var error = RPCError(.upstreamError, "HTTP \(status): \(where_)", status: status,
                                 body: body.isEmpty ? nil : URLRedaction.redact(body))
            if status >= 500 { error.data.retryAfter = retryAfter.flatMap(OutsideSeconds.clamped) }
            return error
        }
    }
}
