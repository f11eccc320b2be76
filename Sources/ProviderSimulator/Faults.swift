/// What the image server does wrong on purpose, one fault per request (see
/// `ImageServer.serve(_:body:faults:)`): enough to drive every error path of a client.
public enum Fault: Sendable, Equatable {
    /// Answer normally.
    case none
    /// Wait this long before the response head, then answer normally.
    case latency(milliseconds: Int)
    /// Send nothing (not even the head) until the test calls `ImageServer.release(_:)` for
    /// this path, then answer normally. Unlike `latency`, the window is the test's to close,
    /// so "the request is in flight" holds however slow the machine is.
    case held
    /// Send the body at this pace.
    case slowBody(bytesPerSecond: Int)
    /// Send the head and this many body bytes, then nothing, keeping the connection open.
    case stall(afterBytes: Int)
    /// Send one body byte per interval (a drip no low-speed limit catches).
    case drip(intervalMilliseconds: Int)
    /// Answer this status (with `Retry-After` when given) and a short text body.
    case status(Int, retryAfter: String? = nil)
    /// Declare the full length but close the connection after this many body bytes.
    case truncate(afterBytes: Int)
    /// Reset the connection (RST) after this many body bytes (0: before any response).
    case reset(afterBytes: Int)
    /// Redirect to this URL (absolute or relative) with this status.
    case redirect(to: String, status: Int = 302)
    /// Declare this Content-Length and stream that much noise.
    case huge(declaredBytes: Int)
    /// Stream noise forever, chunked, with no declared length.
    case endless
    /// Answer a `Range: bytes=N-` request with a `206` whose range starts `shift` bytes later
    /// than asked (its `Content-Range` and body agree with each other, not with the request):
    /// a broken cache splicing the wrong tail. Without `Range`, answer normally.
    case wrongRange(shift: Int)
    /// Answer a `206` with an empty body and no `Content-Range`, whatever was asked.
    case emptyPartial
}

/// Whether the image server honours `Range` requests.
public enum RangeSupport: Sendable, Equatable {
    /// `Range` (with a matching or absent `If-Range`) gets 206 or 416.
    case honoured
    /// `Range` is ignored: every answer is a 200 with the whole body.
    case ignored
}
