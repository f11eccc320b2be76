import HTTPServing

/// A request as the simulator saw it.
public struct SimulatedRequest: Sendable {
    public var method: String
    /// The path and query exactly as sent (`/search/photos?query=x`).
    public var uri: String
    public var headers: [(String, String)]
    public var body: [UInt8]

    /// A request as a route sees it; public so a route can be exercised without a socket.
    public init(method: String, uri: String, headers: [(String, String)], body: [UInt8]) {
        self.method = method
        self.uri = uri
        self.headers = headers
        self.body = body
    }

    /// The request `HTTPServer` collected, in the simulator's shape.
    init(_ request: HTTPServerRequest) {
        method = request.head.method.rawValue
        uri = request.head.uri
        headers = request.head.headers.map { ($0.name, $0.value) }
        body = Array(request.body.readableBytesView)
    }

    /// The path without the query.
    public var path: String { String(uri.split(separator: "?", maxSplits: 1).first ?? "") }

    /// The value of the first header with this name (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}

/// What the simulator answers.
public struct SimulatedResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int = 200, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A plain-text answer.
    public static func text(_ text: String, status: Int = 200) -> SimulatedResponse {
        SimulatedResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array(text.utf8))
    }
}

/// An HTTP/1.1 server on 127.0.0.1, started per test on a free port.
///
/// It exists so that every networked part of imagecached is tested against real sockets
/// and real HTTP, never a mock. Tests, the offline demo and the benchmarks all use it;
/// the provider simulator builds its routes on top of it. The serving itself (binding,
/// keep-alive, body limit, shutdown) is `HTTPServer`'s; this type gives it the simulator's
/// request and response shapes.
public final class LoopbackHTTPServer: Sendable {
    /// Answers one request; called on a NIO event loop, so it must not block.
    public typealias Handler = @Sendable (SimulatedRequest) -> SimulatedResponse
    /// Answers one request by writing through the writer, at its own pace; called on a NIO
    /// event loop, so it must not block (schedule later writes with `writer.after`).
    public typealias StreamingHandler = @Sendable (SimulatedRequest, ResponseWriter) -> Void

    /// The longest request body the simulator reads (its APIs take queries, not uploads).
    static let maxBodyBytes = 8 << 20

    private let server: HTTPServer

    /// The port the server listens on.
    public let port: Int

    /// `http://127.0.0.1:PORT`, the base of every URL this server serves.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts listening on 127.0.0.1 at a free port chosen by the kernel.
    public convenience init(handler: @escaping Handler) async throws {
        try await self.init(streaming: { request, writer in writer.respond(handler(request)) })
    }

    /// Starts listening with a handler that writes its response over time through a
    /// `ResponseWriter` (slow, stalled, endless or broken bodies). `onAbort` is told of every
    /// request whose connection closed before its response ended (the client gave up), with
    /// the body bytes already written, so tests can see that a cancelled transfer stopped.
    public init(streaming handler: @escaping StreamingHandler,
                onAbort: (@Sendable (SimulatedRequest, Int) -> Void)? = nil) async throws {
        var abandoned: HTTPServer.AbandonedHandler?
        if let onAbort {
            abandoned = { request, written in onAbort(SimulatedRequest(request), written) }
        }
        server = try await HTTPServer.start(HTTPServer.Configuration(maxBodyBytes: Self.maxBodyBytes),
                                            onAbandoned: abandoned) { request, writer in
            handler(SimulatedRequest(request), writer)
        }
        port = server.port
    }

    /// Stops listening and closes every connection.
    public func shutdown() async {
        await server.shutdown()
    }
}
