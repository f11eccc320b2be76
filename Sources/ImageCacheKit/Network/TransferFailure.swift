import CCurl
import ImageCacheProtocol

/// Why the engine itself stopped a transfer from inside a callback; the curl code that
/// follows (a write error, an aborted callback, a refused socket) only says *that* it stopped.
public enum AbortReason: Sendable, Hashable {
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

/// Maps what curl and the server said to the engine's transfer failures, and says which
/// failures are worth a retry.
enum TransferFailure {
    /// The error for an aborted transfer (never retried: each reason is final).
    static func error(for reason: AbortReason, url: String) -> TransferError {
        TransferError(.aborted(reason), url: url)
    }

    /// Whether curl's `code` may hide a socket (or the resolver's socket pair) refused for want
    /// of descriptors, so the engine checks before calling the network down.
    static func mayBeDescriptorShortage(_ code: CURLcode) -> Bool {
        [CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_OUT_OF_MEMORY,
         CURLE_FAILED_INIT, CURLE_RECV_ERROR, CURLE_SEND_ERROR].contains(code)
    }

    /// The error for a curl failure code, and whether a retry may help.
    ///
    /// - Parameter requestSent: whether the request went out before curl failed. Every URL
    ///   curl is given has passed the URL policy (and the engine follows redirects itself), so
    ///   `CURLE_UNSUPPORTED_PROTOCOL` after the request was sent is curl refusing the *answer*
    ///   (an HTTP/0.9 or garbage reply), the host's fault; before it, curl refused the URL.
    static func error(for code: CURLcode, url: String, detail: String, requestSent: Bool) -> (TransferError, retryable: Bool) {
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return (TransferError(.cannotConnect(text), url: url), true)
        case CURLE_OPERATION_TIMEDOUT:
            return (TransferError(.timedOut(text), url: url), true)
        case CURLE_RECV_ERROR where isBrokenChunking(text):
            return (TransferError(.malformedAnswer(text), url: url), false)
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return (TransferError(.connectionFailed(text), url: url), true)
        case CURLE_GOT_NOTHING:
            // The host accepted the request and closed without a byte: its fault, but a
            // restarting server does that too, so it is worth another try.
            return (TransferError(.malformedAnswer(text), url: url), true)
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING:
            return (TransferError(.malformedAnswer(text), url: url), false)
        case CURLE_PARTIAL_FILE:
            return (TransferError(.truncated(text), url: url), true)
        case CURLE_UNSUPPORTED_PROTOCOL where requestSent:
            return (TransferError(.malformedAnswer(text), url: url), false)
        case CURLE_UNSUPPORTED_PROTOCOL:
            return (TransferError(.protocolNotAllowed(text), url: url), false)
        case CURLE_TOO_MANY_REDIRECTS:
            return (TransferError(.curlRedirectLimit, url: url), false)
        default:
            return (TransferError(.otherCurl(text), url: url), false)
        }
    }

    /// Whether curl's message for a `CURLE_RECV_ERROR` names a broken chunked body: curl gives
    /// a malformed chunk the code of a failed socket read, and its message ("… in
    /// chunked-encoding") is the one thing telling the host's fault from the network's.
    private static func isBrokenChunking(_ text: String) -> Bool {
        text.contains("chunked-encoding")
    }

    /// The error for a final HTTP status of an image transfer (`StatusHandling.mapErrors`):
    /// a 5xx (503 included) is the host failing, not a quota: `upstream_error` with the
    /// status, and the server's `Retry-After` when it sent one (docs/protocol.md, "Errors").
    static func error(forStatus status: Int, url: String, excerpt: [UInt8], retryAfter: Double?) -> TransferError {
        let body = String(decoding: excerpt.prefix(512), as: UTF8.self)
        return TransferError(.status(status, excerpt: body.isEmpty ? nil : body, retryAfter: retryAfter.flatMap(OutsideSeconds.clamped)),
                             url: url)
    }
}
