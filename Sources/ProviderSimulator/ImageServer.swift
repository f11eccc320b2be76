import Foundation
import ImageCacheSupport
import NIOCore

/// The image-serving half of the simulator: real JPEG/PNG bodies on 127.0.0.1 with faults on
/// demand, counting what it served and what clients abandoned.
///
/// Tests use the counters to prove what did *not* happen ("nothing else was fetched", "the
/// cancelled transfer stopped") and `waitUntil` to wait for what must happen, without sleeps.
public final class ImageServer: Sendable {
    /// One served path.
    public struct Route: Sendable {
        /// The whole representation (ranges are cut from it).
        public var body: [UInt8]
        /// Sent as Content-Type.
        public var contentType: String
        /// Sent as ETag and compared with If-Range.
        public var etag: String?
        /// Whether Range requests get partial answers.
        public var ranges: RangeSupport
        /// The fault of the n-th request is `faults[n]`; the last one repeats. Empty: no fault.
        public var faults: [Fault]
    }

    /// What the server saw, per path (the path without its query).
    public struct Counters: Sendable {
        /// Requests received.
        public var requests: [String: Int] = [:]
        /// Responses sent to their end.
        public var completed: [String: Int] = [:]
        /// Responses whose client closed the connection before their end.
        public var aborted: [String: Int] = [:]
        /// Body bytes written by those abandoned responses.
        public var abortedBytes: [String: Int] = [:]
        /// The `Range` header of each request that had one.
        public var ranges: [String: [String]] = [:]
        /// The `If-Range` header of each request that had a `Range` ("" when it had none),
        /// in the order of `ranges`.
        public var ifRanges: [String: [String]] = [:]
        /// Requests that arrived in a proxy's absolute form (`GET http://host/path`).
        public var proxied = 0
        /// The `User-Agent` of the last request.
        public var lastUserAgent: String?
        /// The last request to each path, as sent (its URI with the query, its headers): what
        /// a redirect passed on to this server.
        public var lastRequest: [String: SimulatedRequest] = [:]
        /// Paths in the order their requests arrived (to check priority order).
        public var arrivals: [String] = []
        /// Responses begun and not yet ended or abandoned.
        public var inFlight = 0
        /// The most responses in progress at once (to check connection limits).
        public var peakInFlight = 0

        /// Every request, all paths together.
        public var totalRequests: Int { requests.values.reduce(0, +) }
        /// Requests for one path (0 when none).
        public func requests(_ path: String) -> Int { requests[path, default: 0] }
        /// Abandoned responses of one path.
        public func aborted(_ path: String) -> Int { aborted[path, default: 0] }
        /// Completed responses of one path.
        public func completed(_ path: String) -> Int { completed[path, default: 0] }
    }

    private struct State {
        var routes: [String: Route] = [:]
        /// Paths whose `.held` responses may go on (see `release`).
        var released: Set<String> = []
        /// `.held` responses waiting for their path's release.
        var held: [String: [@Sendable () -> Void]] = [:]
    }

    /// The HTTP server underneath (its `baseURL` and `port`).
    public let http: LoopbackHTTPServer
    private let state: LockedState<State>

    private init(http: LoopbackHTTPServer) {
        self.http = http
        state = LockedState(State())
    }

    /// Starts an image server on a free port of 127.0.0.1 with no routes.
    public static func start() async throws -> ImageServer {
        let box = ServerBox()
        let http = try await LoopbackHTTPServer(streaming: { request, writer in
            box.server?.handle(request, writer)
        }, onAbort: { request, bytes in
            box.server?.recordAbort(request, bytes: bytes)
        })
        let server = ImageServer(http: http)
        box.set(server)
        return server
    }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { http.baseURL }

    /// The full URL of a path on this server.
    public func url(_ path: String) -> String { http.baseURL + path }

    /// Serves `body` at `path` (replacing any earlier route), with the given faults.
    public func serve(_ path: String, body: [UInt8], contentType: String = "image/jpeg", etag: String? = "\"v1\"",
                      ranges: RangeSupport = .honoured, faults: [Fault] = []) {
        state.withLock {
            $0.routes[path] = Route(body: body, contentType: contentType, etag: etag, ranges: ranges, faults: faults)
        }
    }

    /// A snapshot of the counters.
    public var counters: Counters { observedCounters.value }

    /// The counters, published on every change for `waitUntil`.
    private let observedCounters = Observed(Counters())

    /// Waits until the counters satisfy `condition` (checked now and after every change).
    /// Cancellable, so `withTimeout` can bound it.
    public func waitUntil(_ condition: @escaping @Sendable (Counters) -> Bool) async throws {
        try await observedCounters.wait(until: condition)
    }

    /// Lets every `.held` response of `path` go on, now and from now on (a later `.held`
    /// request of that path answers at once). Tests call it once they have checked what must
    /// hold while the request is in flight.
    public func release(_ path: String) {
        let waiting = state.withLock { s -> [@Sendable () -> Void] in
            s.released.insert(path)
            return s.held.removeValue(forKey: path) ?? []
        }
        for proceed in waiting { proceed() }
    }

    /// Stops the server.
    public func shutdown() async {
        await http.shutdown()
    }

    // MARK: Serving

    private func update(_ change: (inout Counters) -> Void) {
        observedCounters.update(change)
    }

    private static func routingPath(_ request: SimulatedRequest) -> (path: String, proxied: Bool) {
        var uri = request.uri
        var proxied = false
        if let scheme = uri.range(of: "://") {
            proxied = true
            let rest = uri[scheme.upperBound...]
            uri = rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? "/"
        }
        return (String(uri.split(separator: "?", maxSplits: 1).first ?? ""), proxied)
    }

    fileprivate func recordAbort(_ request: SimulatedRequest, bytes: Int) {
        let path = ImageServer.routingPath(request).path
        update {
            $0.aborted[path, default: 0] += 1
            $0.abortedBytes[path, default: 0] += bytes
            $0.inFlight -= 1
        }
    }

    fileprivate func handle(_ request: SimulatedRequest, _ writer: ResponseWriter) {
        let (path, proxied) = ImageServer.routingPath(request)
        let route = state.withLock { $0.routes[path] }
        var index = 0
        update {
            index = $0.requests[path, default: 0]
            $0.requests[path, default: 0] += 1
            if proxied { $0.proxied += 1 }
            if let range = request.header("Range") {
                $0.ranges[path, default: []].append(range)
                $0.ifRanges[path, default: []].append(request.header("If-Range") ?? "")
            }
            $0.lastUserAgent = request.header("User-Agent")
            $0.lastRequest[path] = request
            $0.arrivals.append(path)
            $0.inFlight += 1
            $0.peakInFlight = max($0.peakInFlight, $0.inFlight)
        }
        guard let route else {
            finish(path, writer) { $0.respond(.text("no image at \(path)", status: 404)) }
            return
        }
        let fault = route.faults.isEmpty ? Fault.none : route.faults[min(index, route.faults.count - 1)]
        apply(fault, route: route, path: path, request: request, writer: writer)
    }

    private func apply(_ fault: Fault, route: Route, path: String, request: SimulatedRequest, writer: ResponseWriter) {
        switch fault {
        case .none:
            serve(route, path: path, request: request, writer: writer, pace: nil)
        case .latency(let ms):
            writer.after(.milliseconds(Int64(ms))) {
                self.serve(route, path: path, request: request, writer: writer, pace: nil)
            }
        case .held:
            let proceed: @Sendable () -> Void = {
                guard writer.isOpen else { return }  // the client gave up while held: counted as aborted
                self.serve(route, path: path, request: request, writer: writer, pace: nil)
            }
            let now = state.withLock { s -> Bool in
                if s.released.contains(path) { return true }
                s.held[path, default: []].append(proceed)
                return false
            }
            if now { proceed() }
        case .slowBody(let rate):
            let chunk = max(1, rate / 20)
            serve(route, path: path, request: request, writer: writer, pace: (chunk, .milliseconds(50)))
        case .drip(let ms):
            serve(route, path: path, request: request, writer: writer, pace: (1, .milliseconds(Int64(ms))))
        case .stall(let n):
            writer.writeHead(status: 200, headers: headers(route, length: route.body.count))
            writer.write(Array(route.body.prefix(n)))
        case .status(let code, let retryAfter):
            var response = SimulatedResponse.text("simulated \(code)", status: code)
            if let retryAfter { response.headers.append(("Retry-After", retryAfter)) }
            finish(path, writer) { $0.respond(response) }
        case .truncate(let n):
            writer.writeHead(status: 200, headers: headers(route, length: route.body.count))
            writer.write(Array(route.body.prefix(n))).whenComplete { _ in
                writer.closeAbruptly()
                self.update { $0.inFlight -= 1 }
            }
        case .reset(let n):
            update { $0.inFlight -= 1 }  // the server ends this one itself
            if n == 0 {
                writer.reset()
                return
            }
            writer.writeHead(status: 200, headers: headers(route, length: route.body.count))
            writer.write(Array(route.body.prefix(n))).whenComplete { _ in writer.reset() }
        case .redirect(let location, let status):
            finish(path, writer) {
                $0.respond(SimulatedResponse(status: status, headers: [("Location", location)], body: Array("moved".utf8)))
            }
        case .huge(let declared):
            writer.writeHead(status: 200, headers: headers(route, length: declared))
            stream(writer, path: path, total: declared, chunk: 64 << 10, interval: nil)
        case .endless:
            writer.writeHead(status: 200, headers: [("Content-Type", route.contentType)])
            stream(writer, path: path, total: nil, chunk: 64 << 10, interval: nil)
        case .wrongRange(let shift):
            guard let range = request.header("Range"), range.hasPrefix("bytes="),
                  let asked = Int(range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false).first ?? "") else {
                serve(route, path: path, request: request, writer: writer, pace: nil)
                return
            }
            let start = min(max(0, asked + shift), route.body.count - 1)
            let body = Array(route.body[start...])
            let response = SimulatedResponse(status: 206, headers: headers(route, length: body.count) + [
                ("Content-Range", "bytes \(start)-\(route.body.count - 1)/\(route.body.count)"),
            ], body: body)
            finish(path, writer) { $0.respond(response) }
        case .emptyPartial:
            let response = SimulatedResponse(status: 206, headers: headers(route, length: 0), body: [])
            finish(path, writer) { $0.respond(response) }
        }
    }

    private func headers(_ route: Route, length: Int) -> [(String, String)] {
        var headers = [("Content-Type", route.contentType), ("Content-Length", String(length))]
        if let etag = route.etag { headers.append(("ETag", etag)) }
        if route.ranges == .honoured { headers.append(("Accept-Ranges", "bytes")) }
        return headers
    }

    /// The body (or the asked range of it), at once or paced as (chunk size, interval).
    private func serve(_ route: Route, path: String, request: SimulatedRequest, writer: ResponseWriter,
                       pace: (Int, TimeAmount)?) {
        var status = 200
        var body = route.body
        var extra: [(String, String)] = []
        if route.ranges == .honoured, let range = request.header("Range"), range.hasPrefix("bytes="),
           let start = Int(range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false).first ?? ""),
           request.header("If-Range") == nil || request.header("If-Range") == route.etag {
            if start >= route.body.count {
                var response = SimulatedResponse(status: 416, headers: [("Content-Range", "bytes */\(route.body.count)")])
                response.body = []
                finish(path, writer) { $0.respond(response) }
                return
            }
            status = 206
            body = Array(route.body[start...])
            extra.append(("Content-Range", "bytes \(start)-\(route.body.count - 1)/\(route.body.count)"))
        }
        guard let (chunk, interval) = pace else {
            let response = SimulatedResponse(status: status, headers: headers(route, length: body.count) + extra, body: body)
            finish(path, writer) { $0.respond(response) }
            return
        }
        let paced = body
        writer.writeHead(status: status, headers: headers(route, length: paced.count) + extra)
        stream(writer, path: path, total: paced.count, chunk: chunk, interval: interval) { offset, count in
            Array(paced[offset..<offset + count])
        }
    }

    /// Writes `total` bytes (nil: forever) in pieces, paced by `interval` or by the socket,
    /// stopping as soon as the client has gone.
    private func stream(_ writer: ResponseWriter, path: String, total: Int?, chunk: Int, interval: TimeAmount?,
                        source: (@Sendable (Int, Int) -> [UInt8])? = nil, offset: Int = 0) {
        guard writer.isOpen else { return }
        if let total, offset >= total {
            finish(path, writer) { $0.end() }
            return
        }
        let count = total.map { min(chunk, $0 - offset) } ?? chunk
        let bytes = source?(offset, count) ?? ImageServer.noise(count: count, offset: offset)
        let next: @Sendable () -> Void = {
            self.stream(writer, path: path, total: total, chunk: chunk, interval: interval, source: source, offset: offset + count)
        }
        let written = writer.write(bytes)
        if let interval {
            writer.after(interval, next)
        } else {
            written.whenSuccess(next)
        }
    }

    private func finish(_ path: String, _ writer: ResponseWriter, _ body: (ResponseWriter) -> Void) {
        body(writer)
        update {
            $0.completed[path, default: 0] += 1
            $0.inFlight -= 1
        }
    }

    private static func noise(count: Int, offset: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 + offset) &* 2_654_435_761 >> 13) }
    }
}

/// Lets the HTTP handler reach the image server created after it (the handler must exist
/// before the server can be bound). Written once, before any request can arrive.
private final class ServerBox: Sendable {
    private let value = LockedState<ImageServer?>(nil)
    var server: ImageServer? { value.withLock { $0 } }
    func set(_ server: ImageServer) { value.withLock { $0 = server } }
}
