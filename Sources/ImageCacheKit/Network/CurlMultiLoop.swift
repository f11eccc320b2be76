import CCurl
import Foundation
import ImageCacheProtocol
import Logging

/// The one thread that drives libcurl: it owns the multi handle, the scheduler and every
/// running transfer, sleeps in `curl_multi_poll`, and is woken by `curl_multi_wakeup` when a
/// command arrives (new work, a cancellation, a priority change).
///
/// `@unchecked Sendable` because the thread's closure must capture it: `commands` and the
/// environment's stats are guarded by their own locks, and every other property is touched
/// only by the loop's thread (`run()` and the callbacks curl makes from inside it).
final class CurlMultiLoop: @unchecked Sendable {
    let environment: TransferEnvironment
    let commands: CommandSink
    private let multi: UnsafeMutableRawPointer
    private var scheduler: TransferScheduler
    private var jobs: [UInt64: TransferJob] = [:]
    /// Transfers waiting out a retry's backoff, and when each may go again.
    private var delayed: [UInt64: ContinuousClock.Instant] = [:]
    /// Easy handles kept for reuse (a reset is cheaper than a new handle).
    private var pool: [UnsafeMutableRawPointer] = []

    init(environment: TransferEnvironment, limits: TransferScheduler.Limits) {
        CurlGlobal.initialize()
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        self.multi = multi
        self.environment = environment
        scheduler = TransferScheduler(limits: limits)
        commands = CommandSink(multi: multi)
        _ = ic_multi_setopt_long(multi, CURLMOPT_PIPELINING, IC_CURLPIPE_MULTIPLEX)
        _ = ic_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, limits.maxConnections)
        _ = ic_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, limits.maxPerHost)
    }

    /// Starts the thread; it runs until a `.shutdown` command.
    func startThread() {
        let thread = Thread { [self] in run() }
        thread.name = "imagecached-curl"
        thread.start()
    }

    private func run() {
        while true {
            for command in commands.drain() {
                if case .shutdown = command {
                    stop()
                    return
                }
                apply(command)
            }
            promoteDueRetries()
            for id in scheduler.admit() {
                if let job = jobs[id] { startAttempt(job) }
            }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var finishedAny = false
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                var privatePointer: UnsafeMutableRawPointer?
                _ = ic_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &privatePointer)
                guard let privatePointer else { continue }
                let job = Unmanaged<TransferJob>.fromOpaque(privatePointer).takeUnretainedValue()
                complete(job, code: code)
                finishedAny = true
            }
            publishQueueStats()
            if finishedAny { continue }  // admit the next transfers before sleeping
            var fds: Int32 = 0
            curl_multi_poll(multi, nil, 0, pollTimeout(), &fds)
        }
    }

    // MARK: Commands

    private func apply(_ command: EngineCommand) {
        switch command {
        case .start(let request, let handle, let events):
            // One read of the settings per transfer: its first URL, redirects and addresses are
            // all judged by the same policy, even when a reload lands meanwhile.
            let settings = environment.settings
            let target: URLPolicy.Target
            do { target = try settings.policy.check(request.url) } catch {
                handle.finish(.failure(error))
                return
            }
            guard scheduler.enqueue(handle.id, host: target.host, priority: request.priority) else {
                handle.finish(.failure(TransferError(.queueFull(waiting: scheduler.limits.maxQueued))))
                return
            }
            jobs[handle.id] = TransferJob(id: handle.id, request: request, handle: handle, target: target,
                                          events: events, environment: environment, settings: settings)
        case .cancel(let id, let reason):
            guard let job = jobs.removeValue(forKey: id) else { return }
            if let easy = job.easy {
                curl_multi_remove_handle(multi, easy)
                countConnections(of: easy)
                releaseEasy(of: job)
                scheduler.finished(id)
                environment.stats.update { $0.inFlight -= 1 }
            } else if delayed.removeValue(forKey: id) == nil {
                scheduler.removeQueued(id)
            }
            environment.stats.update { $0.bytesDiscarded += job.totalReceived }
            job.discardBody()
            job.handle.finish(.failure(Cancellation(.transfer(url: job.target.url), reason: reason)))
        case .reprioritize(let id, let priority):
            guard let job = jobs[id] else { return }
            job.priority = priority
            scheduler.reprioritize(id, to: priority)
        case .bodyReleased:
            scheduler.bodyReleased()
        case .shutdown:
            break
        }
    }

    private func stop() {
        for command in commands.close() {
            if case .start(_, let handle, _) = command {
                handle.finish(.failure(Cancellation.shutdown))
            }
        }
        for (_, job) in jobs {
            if let easy = job.easy {
                curl_multi_remove_handle(multi, easy)
                countConnections(of: easy)
                releaseEasy(of: job)
            }
            job.discardBody()
            job.handle.finish(.failure(Cancellation.shutdown))
        }
        jobs = [:]
        for easy in pool { curl_easy_cleanup(easy) }
        pool = []
        curl_multi_cleanup(multi)
        environment.stats.update { $0.inFlight = 0; $0.queued = 0 }
    }

    // MARK: Attempts

    private func startAttempt(_ job: TransferJob) {
        let now = ContinuousClock.now
        if job.deadline == nil { job.deadline = now + job.settings.network.transferTimeout }
        guard job.beginAttempt() else {
            scheduler.finished(job.id)
            fail(job, TransferFailure.error(for: job.abort ?? .diskFailure("cannot start", errno: 0), url: job.target.url))
            return
        }
        guard let easy = pool.popLast() ?? curl_easy_init() else {
            scheduler.finished(job.id)
            fail(job, TransferError(.engine("curl_easy_init failed")))
            return
        }
        job.easy = easy
        job.requests += 1
        configure(easy, for: job, remaining: job.deadline! - now)
        environment.stats.update { $0.requests += 1; $0.inFlight += 1 }
        curl_multi_add_handle(multi, easy)
    }

    private func configure(_ easy: UnsafeMutableRawPointer, for job: TransferJob, remaining: Duration) {
        let network = job.settings.network
        let me = Unmanaged.passUnretained(job).toOpaque()
        _ = ic_easy_setopt_string(easy, CURLOPT_URL, job.target.url)
        _ = ic_easy_setopt_pointer(easy, CURLOPT_PRIVATE, me)
        _ = ic_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = ic_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = ic_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0)  // the engine follows, checking each hop
        // Explicit, so http_proxy/https_proxy/all_proxy in the environment are never used.
        _ = ic_easy_setopt_string(easy, CURLOPT_PROXY, job.settings.proxyOption)
        if let caBundle = network.caBundle { _ = ic_easy_setopt_string(easy, CURLOPT_CAINFO, caBundle) }
        _ = ic_easy_setopt_string(easy, CURLOPT_USERAGENT, network.userAgent)
        _ = ic_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, IC_CURL_HTTP_VERSION_2TLS)
        if job.freshConnection { _ = ic_easy_setopt_long(easy, CURLOPT_FRESH_CONNECT, 1) }
        if job.target.url.utf8.starts(with: "https:".utf8) {
            // Wait for a connection being set up to a host rather than opening another, so that
            // when the host speaks HTTP/2 every transfer multiplexes over one connection. Not for
            // plain http, which is always HTTP/1.1 here: waiting would only delay the others.
            _ = ic_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1)
        }
        _ = ic_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, TransferEnvironment.milliseconds(network.connectTimeout))
        _ = ic_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, TransferEnvironment.milliseconds(remaining))
        _ = ic_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, 1)
        _ = ic_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, TransferEnvironment.wholeSeconds(network.stallTimeout))
        _ = ic_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, environment.receiveBufferSize)
        _ = ic_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, job.errorBuffer)
        _ = ic_easy_setopt_write(easy, curlWriteBody)
        _ = ic_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me)
        _ = ic_easy_setopt_header(easy, curlWriteHeader)
        _ = ic_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me)
        _ = ic_easy_setopt_xferinfo(easy, curlTransferInfo)
        _ = ic_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, me)
        _ = ic_easy_setopt_long(easy, CURLOPT_NOPROGRESS, 0)
        if network.proxy == nil {
            // With a proxy, curl connects to the proxy, whose address the user chose.
            _ = ic_easy_setopt_opensocket(easy, curlOpenSocket)
            _ = ic_easy_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, me)
        }
        if job.request.statusHandling == .returnAll {
            _ = ic_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, "")
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for line in job.attemptHeaders() { list = curl_slist_append(list, line) }
        job.headerList = list
        if let list { _ = ic_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list) }
    }

    /// Takes the easy handle back from a job (after `curl_multi_remove_handle`) for reuse.
    private func releaseEasy(of job: TransferJob) {
        guard let easy = job.easy else { return }
        job.easy = nil
        curl_easy_reset(easy)
        if pool.count < scheduler.limits.maxConnections { pool.append(easy) } else { curl_easy_cleanup(easy) }
        if let list = job.headerList {
            curl_slist_free_all(list)
            job.headerList = nil
        }
    }

    /// What to do once curl is done with an attempt.
    private func complete(_ job: TransferJob, code: CURLcode) {
        guard let easy = job.easy else { return }
        curl_multi_remove_handle(multi, easy)
        var status = 0
        _ = ic_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var redirectPointer: UnsafeMutablePointer<CChar>?
        _ = ic_easy_getinfo_string(easy, CURLINFO_REDIRECT_URL, &redirectPointer)
        let redirect = redirectPointer.map { String(cString: $0) }
        let detail = String(cString: job.errorBuffer)
        var version = 0
        _ = ic_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        job.httpVersion = CurlMultiLoop.versionName(version)
        var requestSize = 0
        _ = ic_easy_getinfo_long(easy, CURLINFO_REQUEST_SIZE, &requestSize)
        let reused = countConnections(of: easy) == 0
        releaseEasy(of: job)
        scheduler.finished(job.id)
        environment.stats.update { $0.inFlight -= 1 }
        job.decideBody()

        if case .rangeMismatch(let what) = job.abort, job.resume != nil {
            return restartFromZero(job, reason: what)
        }
        if let abort = job.abort {
            return fail(job, TransferFailure.error(for: abort, url: job.target.url))
        }
        let code = job.endedAtHead ? CURLE_OK : code
        if code == CURLE_COULDNT_CONNECT, let refusal = job.refusalReason {
            return fail(job, TransferFailure.error(for: .refusedAddress(refusal), url: job.target.url))
        }
        if code != CURLE_OK {
            if TransferFailure.mayBeDescriptorShortage(code), DescriptorLimit.isExhausted {
                return fail(job, TransferFailure.error(for: .outOfDescriptors, url: job.target.url))
            }
            let (error, retryable) = TransferFailure.error(for: code, url: job.target.url, detail: detail,
                                                           requestSent: requestSize > 0)
            if case .malformedAnswer = error.failure, reused, !job.freshConnection,
               job.httpVersion != "2", job.httpVersion != "3" {
                // Garbage on a kept-alive HTTP/1 connection may be what an earlier answer left
                // on it (bytes past its announced end): curl has closed that connection, and the
                // same request on a new one, at once, is the host's real answer. Not one of the
                // job's retries (another answer's fault, and `freshConnection` allows it once),
                // so a job that spent them on 5xx answers still gets it; HTTP/2 and 3 frame
                // every answer, so nothing is ever left over there.
                job.freshConnection = true
                let pastDeadline = job.deadline.map { ContinuousClock.now >= $0 } ?? false
                if !pastDeadline { return retry(job, after: .zero, reason: error.description, counted: false) }
            }
            if retryable, let delay = retryDelay(job, wanted: environment.retry.backoff(retry: job.retries + 1)) {
                return retry(job, after: delay, reason: error.description)
            }
            return fail(job, error)
        }
        if [301, 302, 303, 307, 308].contains(status), let redirect {
            return follow(job, to: redirect)
        }
        if status == 416, job.rangeSent {
            return restartFromZero(job, reason: "416 to bytes=\(job.bodySize)- (\(job.headers.last { $0.0.lowercased() == "content-range" }?.1 ?? "no Content-Range"))")
        }
        if (200..<300).contains(status), job.resume != nil, let total = job.answerTotal, job.bodySize != total {
            // The body ended at the wrong size (a server closing cleanly early, or sending more
            // than it announced): never a finished download. Short: continue it; long: start over.
            let reason = "the body ended at \(job.bodySize) of \(total) bytes"
            if job.bodySize > total { return restartFromZero(job, reason: reason) }
            if let delay = retryDelay(job, wanted: environment.retry.backoff(retry: job.retries + 1)) {
                return retry(job, after: delay, reason: reason)
            }
            return fail(job, TransferError(.wrongSize(reason), url: job.target.url))
        }
        if status == 429 || status == 503 {
            let retryAfter = RetryPolicy.parseRetryAfter(job.headers.last { $0.0.lowercased() == "retry-after" }?.1)
            if let retryAfter {
                let wait = OutsideSeconds.duration(retryAfter)
                if wait <= environment.retry.maxRetryAfter, let delay = retryDelay(job, wanted: wait) {
                    return retry(job, after: delay, reason: "HTTP \(status), Retry-After \(retryAfter) s")
                }
                return finish(job, status: status, retryAfter: retryAfter)
            }
            if status == 429 { return finish(job, status: status, retryAfter: nil) }
        }
        if status >= 500, let delay = retryDelay(job, wanted: environment.retry.backoff(retry: job.retries + 1)) {
            return retry(job, after: delay, reason: "HTTP \(status)")
        }
        finish(job, status: status, retryAfter: nil)
    }

    /// The final answer: a success, or a status error for an image transfer (any status but a
    /// 2xx, and a 204 or 205, which by definition carry no content where an image was asked).
    private func finish(_ job: TransferJob, status: Int, retryAfter: Double?) {
        let delivers = (200..<300).contains(status) && status != 204 && status != 205
        if !delivers && job.request.statusHandling == .mapErrors {
            return fail(job, TransferFailure.error(forStatus: status, url: job.target.url, excerpt: job.excerpt, retryAfter: retryAfter))
        }
        jobs[job.id] = nil
        let body = job.takeBody()
        job.events?(.progress(received: body.count, expected: body.count))
        let awaitsRelease = job.request.awaitsRelease
        if awaitsRelease { scheduler.bodyDelivered() }
        job.handle.finish(.success(TransferResult(status: status, headers: job.headers, body: body,
                                                  finalURL: job.target.url, requests: job.requests,
                                                  httpVersion: job.httpVersion, awaitsRelease: awaitsRelease)))
    }

    /// Adds the connections curl opened for this attempt (0 when it reused one) to the stats,
    /// and returns their number.
    @discardableResult
    private func countConnections(of easy: UnsafeMutableRawPointer) -> Int {
        var opened = 0
        _ = ic_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &opened)
        if opened > 0 { environment.stats.update { $0.connectionsOpened += opened } }
        return opened
    }

    /// `CURLINFO_HTTP_VERSION`'s value as the version's usual name ("" when none was spoken).
    static func versionName(_ version: Int) -> String {
        switch version {
        case IC_CURL_HTTP_VERSION_1_0: return "1.0"
        case IC_CURL_HTTP_VERSION_1_1: return "1.1"
        case IC_CURL_HTTP_VERSION_2_0: return "2"
        case IC_CURL_HTTP_VERSION_3: return "3"
        default: return ""
        }
    }

    private func fail(_ job: TransferJob, _ error: TransferError) {
        environment.logger.debug("transfer failed", metadata: ["error": "\(error)", "requests": "\(job.requests)"])
        jobs[job.id] = nil
        job.discardBody()
        job.handle.finish(.failure(error))
    }

    /// One redirect hop: checked like the first URL, at most `maxRedirects`, never a loop, and
    /// stripped of credentials when it leaves the first origin.
    private func follow(_ job: TransferJob, to next: String) {
        guard job.hops < environment.maxRedirects else {
            return fail(job, TransferError(.tooManyRedirects(limit: environment.maxRedirects), url: job.chain[0]))
        }
        var target: URLPolicy.Target
        do throws(TransferError) {
            target = try job.settings.policy.check(next)
            if !target.sameOrigin(as: job.target) || !job.credentialsAllowed {
                // Another origin gets neither the credential headers nor a key the first host
                // copied into its Location (docs/protocol.md, "Redirects and credentials").
                job.dropCredentials()
                let clean = URLRedaction.removingParameters(carrying: job.secrets, from: target.url)
                if clean != target.url { target = try job.settings.policy.check(clean) }
            }
        } catch {
            return fail(job, TransferError(.redirectRefused(error)))
        }
        guard !job.chain.contains(target.url) else {
            return fail(job, TransferError(.redirectLoop, url: target.url))
        }
        job.hops += 1
        job.chain.append(target.url)
        job.target = target
        job.discardBody()
        requeue(job)
    }

    /// An answer that cannot continue the partial file (a 416, a `Content-Range` that does
    /// not fit, a body of the wrong size): the file is emptied by the next attempt, which asks
    /// for the whole body at once. It counts as a retry, so a server that never answers a
    /// usable range ends the job instead of looping.
    private func restartFromZero(_ job: TransferJob, reason: String) {
        guard job.retries < environment.retry.maxRetries else {
            return fail(job, TransferFailure.error(for: .rangeMismatch(reason), url: job.target.url))
        }
        environment.logger.notice("the answer does not continue the partial download; restarting it from byte 0", metadata: [
            "url": "\(URLRedaction.redact(job.target.url))", "reason": "\(reason)",
        ])
        job.retries += 1
        environment.stats.update { $0.retries += 1 }
        job.events?(.retrying(attempt: job.retries, reason: reason))
        job.restartFromZero()
        requeue(job)
    }

    /// Back into the queue at the head of its lane (it keeps its turn).
    private func requeue(_ job: TransferJob) {
        _ = scheduler.enqueue(job.id, host: job.target.host, priority: job.priority, front: true)
    }

    /// The delay to use for one more try, or nil when retries are used up or the deadline
    /// would pass first.
    private func retryDelay(_ job: TransferJob, wanted: Duration) -> Duration? {
        guard job.retries < environment.retry.maxRetries else { return nil }
        if let deadline = job.deadline, ContinuousClock.now + wanted >= deadline { return nil }
        return wanted
    }

    /// Queues the job again after `delay`; `counted` says whether it spends one of its retries.
    private func retry(_ job: TransferJob, after delay: Duration, reason: String, counted: Bool = true) {
        if counted { job.retries += 1 }
        environment.stats.update { $0.retries += 1 }
        environment.logger.debug("retrying", metadata: [
            "url": "\(URLRedaction.redact(job.target.url))", "attempt": "\(job.retries)", "reason": "\(reason)",
        ])
        job.events?(.retrying(attempt: job.retries, reason: reason))
        if job.resume == nil { job.discardBody() }  // a caller's partial file grows across attempts
        delayed[job.id] = .now + delay
    }

    private func promoteDueRetries() {
        guard !delayed.isEmpty else { return }
        let now = ContinuousClock.now
        for (id, due) in delayed where due <= now {
            delayed[id] = nil
            if let job = jobs[id] { requeue(job) }
        }
    }

    private func pollTimeout() -> Int32 {
        guard let soonest = delayed.values.min() else { return 1000 }
        let wait = soonest - .now
        return Int32(max(0, min(1000, TransferEnvironment.milliseconds(wait))))
    }

    /// The queue's figures, in one update so a reader sees them together (every turn of the
    /// loop, after its commands, admissions and completions).
    private func publishQueueStats() {
        let queued = scheduler.queuedCount + delayed.count, unreleased = scheduler.unreleasedBodies
        environment.stats.update {
            $0.queued = queued
            $0.unreleasedBodies = unreleased
        }
    }
}

/// `curl_global_init` once per process, before the first handle (it is not thread-safe).
enum CurlGlobal {
    private static let done: Bool = {
        curl_global_init(IC_CURL_GLOBAL_DEFAULT)
        return true
    }()

    static func initialize() { _ = done }
}
