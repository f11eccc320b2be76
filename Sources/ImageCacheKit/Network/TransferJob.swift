import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// One transfer's life on the curl thread: its target (which changes with each redirect hop),
/// its retry count and deadline, and the state of the current HTTP attempt that curl's
/// callbacks fill in. Confined to the curl thread: created, called back and finished there.
final class TransferJob {
    let id: UInt64
    let handle: TransferHandle
    let request: TransferRequest
    let events: (@Sendable (TransferEvent) -> Void)?
    let environment: TransferEnvironment
    /// The network settings and policy this transfer keeps to its end (taken when queued).
    let settings: TransferEnvironment.Settings
    var priority: TransferPriority
    /// The current hop's checked URL.
    var target: URLPolicy.Target
    /// Every URL of the redirect chain so far, to catch a loop.
    var chain: [String]
    /// The request's own headers, less its credentials once a redirect left the first origin.
    private(set) var requestHeaders: [(String, String)]
    /// The secret values the first request carried (`URLRedaction.secrets`), kept out of any
    /// URL a redirect leads to on another origin.
    let secrets: [String]
    /// False once a redirect left the first origin: credentials are then never sent again.
    private(set) var credentialsAllowed = true
    var hops = 0
    var retries = 0
    var requests = 0
    /// The total deadline (`transfer_timeout`), set when the transfer is first admitted.
    var deadline: ContinuousClock.Instant?
    /// The partial body to continue (the body is always written to its file). Its validator
    /// and total follow the answers: a restarted body's new `ETag` is the next `If-Range`.
    var resume: TransferRequest.Resume?
    /// Set when an answer could not continue the file (a 416, a `Content-Range` that does not
    /// fit, a body of the wrong size): the next attempt empties it and asks for the whole body.
    private var restartNext = false
    /// Body bytes received over every attempt (what a cancellation discards).
    var totalReceived = 0
    /// The HTTP version the last finished attempt spoke (see `TransferResult.httpVersion`).
    var httpVersion = ""

    // MARK: The current attempt
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private(set) var status = 0
    private(set) var headers: [(String, String)] = []
    private(set) var contentLength: Int?
    private(set) var sink: BodySink?
    /// The start of an error answer's body, for `upstream_error`'s `data.body`.
    private(set) var excerpt: [UInt8] = []
    private(set) var rangeSent = false
    /// The answer's head was read to its end (`headersComplete` ran for this response).
    private var headDone = false
    /// The answer's status line says HTTP/1.x, whose bodies are framed by the headers alone.
    private var http1 = false
    /// The attempt was stopped at the end of a bodyless answer's head (`bodylessStatuses`):
    /// the answer is complete, and curl's failure code only closes the connection it came on.
    private(set) var endedAtHead = false
    /// Every further attempt opens a new connection (one answer came garbled on a reused one).
    var freshConnection = false
    /// The body's complete length as this answer announced it (`Content-Range` total of a
    /// checked 206, else `Content-Length`): the size the body must end at.
    private(set) var answerTotal: Int?
    private(set) var abort: AbortReason?
    private(set) var refusalReason: String?
    private var bodyDecided = false
    private var keepsBody = false
    private var lastActivity = ContinuousClock.now
    private var lastProgress: ContinuousClock.Instant?
    private var lastProgressSize = 0
    /// How many bytes of a resumable body may arrive between two `.progress` events.
    static let fileProgressStep = 256 << 10

    init(id: UInt64, request: TransferRequest, handle: TransferHandle, target: URLPolicy.Target,
         events: (@Sendable (TransferEvent) -> Void)?, environment: TransferEnvironment,
         settings: TransferEnvironment.Settings) {
        self.id = id
        self.request = request
        self.handle = handle
        self.target = target
        self.events = events
        self.environment = environment
        self.settings = settings
        priority = request.priority
        chain = [target.url]
        resume = request.resume
        requestHeaders = request.headers
        secrets = URLRedaction.secrets(url: request.url, headers: request.headers)
    }

    /// A redirect hop left the first origin: its credential headers stay behind for good
    /// (docs/protocol.md, "Redirects and credentials"), as browsers and curl do.
    func dropCredentials() {
        credentialsAllowed = false
        requestHeaders.removeAll { URLRedaction.credentialHeaders.contains($0.0.lowercased()) }
    }

    deinit {
        errorBuffer.deallocate()
        sink?.discard()
    }

    /// Resets the per-attempt state and opens the body sink; false when the partial file of a
    /// resume cannot be opened.
    func beginAttempt() -> Bool {
        status = 0
        headers = []
        contentLength = nil
        excerpt = []
        abort = nil
        refusalReason = nil
        bodyDecided = false
        keepsBody = false
        rangeSent = false
        headDone = false
        http1 = false
        endedAtHead = false
        answerTotal = nil
        bodySizeAtStart = nil
        lastActivity = .now
        lastProgress = nil
        lastProgressSize = 0
        errorBuffer[0] = 0
        sink?.discard()
        if let resume {
            guard let partial = BodySink(appendingTo: resume) else {
                sink = nil
                abort = .diskFailure("cannot open the partial download \(resume.path)", errno: errno)
                return false
            }
            // A range needs a validator: without `If-Range` a changed resource would splice
            // its tail onto the old bytes, so such a file is emptied and fetched whole.
            let continues = !restartNext && resume.validator != nil
            restartNext = false
            if !continues, partial.size > 0, !partial.restart() {
                abort = .diskFailure(partial.failure ?? "cannot empty the partial download", errno: partial.failureCode)
                partial.discard()
                return false
            }
            sink = partial
            rangeSent = continues && partial.size > 0
        } else {
            sink = BodySink(memoryLimit: request.keepInMemory ? Int.max : environment.memoryBodyLimit,
                            spillFiles: environment.spillFiles)
        }
        return true
    }

    /// The request headers of this attempt, `Range`/`If-Range` included for a resume.
    func attemptHeaders() -> [String] {
        var lines = requestHeaders.map { "\($0.0): \($0.1)" }
        if rangeSent, let validator = resume?.validator, let sink {
            lines.append("Range: bytes=\(sink.size)-")
            lines.append("If-Range: \(validator)")
        }
        return lines
    }

    /// The sink's body, handed over (the job no longer owns it).
    func takeBody() -> TransferBody {
        let body = sink?.finish() ?? .memory([])
        sink = nil
        return body
    }

    /// Drops the sink (a spill file goes back to the engine's pool; a caller's partial file is kept for later).
    func discardBody() {
        sink?.discard()
        sink = nil
    }

    /// The next attempt empties the file and asks for the whole body (after a 416, a range
    /// that does not continue the file, or a body that ended at the wrong size).
    func restartFromZero() {
        restartNext = true
    }

    var bodySize: Int { sink?.size ?? 0 }

    // MARK: Called back by curl (on the curl thread)

    /// One header line, parsed on bytes (this runs for every line of every response, so it
    /// avoids String searching): a status line starts a new response, `Content-Length` is
    /// checked against `max_image_bytes` at once.
    func receiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        lastActivity = .now
        var end = line.count
        while end > 0, line[end - 1] == 0x0D || line[end - 1] == 0x0A { end -= 1 }
        if end >= 5, line[0] == 0x48, line[1] == 0x54, line[2] == 0x54, line[3] == 0x50, line[4] == 0x2F {  // "HTTP/"
            // A new response (a 100 Continue, a proxy's CONNECT answer, or the real one).
            var index = 5
            while index < end, line[index] != 0x20 { index += 1 }
            while index < end, line[index] == 0x20 { index += 1 }
            var code = 0
            while index < end, (0x30...0x39).contains(line[index]), code < 100_000 {  // no overflow on a hostile line
                code = code * 10 + Int(line[index] - 0x30)
                index += 1
            }
            status = code
            http1 = end > 5 && line[5] == 0x31  // "HTTP/1"
            headers = []
            contentLength = nil
            headDone = false
            return true
        }
        if end == 0 {
            // The blank line ending a head: a 1xx is followed by another; the final one is
            // checked before its first body byte (trailers after a chunked body end the same way).
            guard status >= 200, !headDone else { return true }
            headDone = true
            guard headersComplete() else { return false }
            if http1, TransferJob.bodylessStatuses.contains(status) {
                // Whatever a host sends after this head is no part of this answer, and would be
                // read as the start of the next answer on the connection: stop here, which makes
                // curl close the connection instead of keeping it for the next request.
                endedAtHead = true
                return false
            }
            return true
        }
        guard let colon = line[..<end].firstIndex(of: 0x3A) else { return true }
        var valueStart = colon + 1
        while valueStart < end, line[valueStart] == 0x20 || line[valueStart] == 0x09 { valueStart += 1 }
        var valueEnd = end
        while valueEnd > valueStart, line[valueEnd - 1] == 0x20 || line[valueEnd - 1] == 0x09 { valueEnd -= 1 }
        let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
        let value = UnsafeRawBufferPointer(rebasing: line[valueStart..<valueEnd])
        headers.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        if TransferJob.isContentLength(name) {
            var length = 0
            for byte in value {
                guard (0x30...0x39).contains(byte), length < Int.max / 20 else { return true }
                length = length * 10 + Int(byte - 0x30)
            }
            contentLength = length
            // Refuse early what will be too large, before a single body byte is paid for.
            let offset = status == 206 ? bodySize : 0
            if (200..<300).contains(status), offset + length > settings.network.maxImageBytes {
                abort = .tooLarge(limit: settings.network.maxImageBytes)
                return false
            }
            if (200..<300).contains(status), !rangeSent || status == 206, let sink, !sink.reserve(offset + length) {
                abort = .diskFailure(sink.failure ?? "cannot store the body", errno: sink.failureCode)
                return false
            }
        }
        return true
    }

    private static let contentLengthName = Array("content-length".utf8)

    /// Statuses whose answer ends with its head, whatever its headers say (RFC 9112 §6.3):
    /// bytes a host sends after such a head (a "204 with a body") would be taken for the next
    /// answer on a kept-alive HTTP/1.1 connection.
    static let bodylessStatuses: Set<Int> = [204, 304]

    private static func isContentLength(_ name: UnsafeRawBufferPointer) -> Bool {
        guard name.count == contentLengthName.count else { return false }
        for (byte, expected) in zip(name, contentLengthName) where byte | 0x20 != expected && byte != expected {
            return false
        }
        return true
    }

    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let now = ContinuousClock.now
        lastActivity = now
        totalReceived += bytes.count
        environment.stats.update { $0.bytesReceived += bytes.count }
        if !bodyDecided { decideBody() }
        if abort != nil { return false }
        guard keepsBody, let sink else {
            if excerpt.count < 1024 { excerpt.append(contentsOf: bytes.prefix(1024 - excerpt.count)) }
            return true
        }
        if sink.size + bytes.count > settings.network.maxImageBytes {
            abort = .tooLarge(limit: settings.network.maxImageBytes)
            return false
        }
        let offset = sink.size
        guard sink.write(bytes) else {
            abort = .diskFailure(sink.failure ?? "cannot store the body", errno: sink.failureCode)
            return false
        }
        if let events {
            if request.deliverChunks { events(.chunk(offset: offset, bytes: Array(bytes))) }
            // A file being written for a caller (a download) also reports every
            // `TransferJob.fileProgressStep` bytes: its verifier tails the file and must not fall
            // a whole interval behind the last byte.
            if lastProgress.map({ now - $0 >= environment.progressInterval }) ?? true
                || (resume != nil && sink.size - lastProgressSize >= TransferJob.fileProgressStep) {
                lastProgress = now
                lastProgressSize = sink.size
                events(.progress(received: sink.size, expected: expectedSize))
            }
        }
        return true
    }

    /// False when the transfer has stalled or run out of time (curl then aborts it).
    func checkTimers() -> Bool {
        let now = ContinuousClock.now
        if now - lastActivity > settings.network.stallTimeout {
            abort = .stalled(seconds: TransferEnvironment.seconds(settings.network.stallTimeout))
            return false
        }
        if let deadline, now > deadline {
            abort = .deadline(seconds: TransferEnvironment.seconds(settings.network.transferTimeout))
            return false
        }
        return true
    }

    /// The policy's verdict on a resolved address for the current hop.
    func refusal(for address: IPAddress) -> String? {
        settings.policy.refusal(for: address, target: target)
    }

    func refuse(_ reason: String) {
        refusalReason = reason
    }

    /// The socket for this hop could not be opened with `code` (from the open-socket
    /// callback): out of descriptors becomes `busy`, not `network_unavailable`.
    func socketFailed(errno code: Int32) {
        if code == EMFILE || code == ENFILE { abort = .outOfDescriptors }
    }

    /// The body's expected total, counting bytes already on disk for a resumed body.
    var expectedSize: Int? {
        if let answerTotal { return answerTotal }
        guard let contentLength else { return nil }
        return contentLength + (status == 206 ? (bodySizeAtStart ?? 0) : 0)
    }

    /// The end of a final answer's head, before any of its body: for a transfer that writes a
    /// partial file, a `206` is used only when its `Content-Range` continues the file exactly
    /// (`ContentRange.fits`), else the attempt stops with `.rangeMismatch` and the engine starts
    /// the file over; a `200` to a range request empties the file now (the whole body follows).
    /// The caller hears where the body starts, its total and its validator (`.response`).
    private func headersComplete() -> Bool {
        guard (200..<300).contains(status) else { return true }
        let resumable = resume != nil
        var offset = 0
        if status == 206, resumable || rangeSent {
            let requested = rangeSent ? bodySize : 0
            let value = header("content-range")
            guard let range = ContentRange.parse(value),
                  range.fits(offset: requested, knownTotal: resume?.total, contentLength: contentLength) else {
                abort = .rangeMismatch("asked bytes=\(requested)- (total \(resume?.total.map(String.init) ?? "unknown")), "
                                       + "got Content-Range \(value.map { "\"\($0.prefix(80))\"" } ?? "none")"
                                       + (contentLength.map { " with Content-Length \($0)" } ?? ""))
                return false
            }
            offset = requested
            answerTotal = range.total
        } else {
            if rangeSent, let sink, !sink.restart() {
                abort = .diskFailure(sink.failure ?? "cannot restart the body", errno: sink.failureCode)
                return false
            }
            answerTotal = status == 206 ? nil : contentLength
        }
        bodySizeAtStart = offset
        guard resumable else { return true }
        let validator = TransferJob.validator(in: headers)
        // A 206 continues the bytes the sent validator describes (a server may leave it out
        // of a partial answer); a whole body is described by its own answer only.
        resume?.validator = status == 206 ? (validator ?? resume?.validator) : validator
        resume?.total = answerTotal
        events?(.response(offset: offset, total: answerTotal, validator: resume?.validator))
        return true
    }

    /// The last value of the header `name` (lowercase) in this answer.
    private func header(_ name: String) -> String? {
        headers.last { $0.0.lowercased() == name }?.1
    }

    /// A strong `ETag`, else `Last-Modified`: what `If-Range` accepts (RFC 9110 §13.1.5; a weak
    /// `ETag` never matches there). Nil when the answer has neither.
    static func validator(in headers: [(String, String)]) -> String? {
        if let etag = headers.last(where: { $0.0.lowercased() == "etag" })?.1, !etag.isEmpty, !etag.hasPrefix("W/") {
            return etag
        }
        return headers.last { $0.0.lowercased() == "last-modified" }?.1
    }

    private var bodySizeAtStart: Int?

    /// On the first body byte: keep this body (a success, or any answer when the caller maps
    /// statuses itself), or keep only an excerpt (errors, redirects).
    func decideBody() {
        guard !bodyDecided else { return }
        bodyDecided = true
        let redirect = (300..<400).contains(status)
        keepsBody = (200..<300).contains(status) || (request.statusHandling == .returnAll && !redirect)
        if !headDone, abort == nil, status >= 200 {
            // No blank line was seen (a server closing after a head): check it now.
            headDone = true
            _ = headersComplete()
        }
        if keepsBody && rangeSent && status != 206 && bodySizeAtStart != 0 {
            // The server ignored the range (or If-Range said the file changed): the whole body follows.
            if let sink, !sink.restart() {
                abort = .diskFailure(sink.failure ?? "cannot restart the body", errno: sink.failureCode)
            }
        }
        if bodySizeAtStart == nil { bodySizeAtStart = bodySize }
    }
}
