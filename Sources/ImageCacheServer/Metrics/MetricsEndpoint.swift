import HTTPServing
import ImageCacheConfig
import ImageCacheKit
import Logging
import NIOCore
import NIOHTTP1

/// `GET /metrics` over HTTP/1.1 on `[daemon] metrics_listen` (TCP or a Unix socket), on the
/// daemon's own event loops.
///
/// Deliberately small: one path, one method (HEAD too), one answer per connection (then
/// `Connection: close`, which every scraper handles), nothing else (404 for another path,
/// 405 for another method). Request heads are bounded by NIO's HTTP parser; a request with a
/// body (no scrape sends one) is refused with 413 before it is read. The answer is always the
/// Prometheus text format 0.0.4: swift-prometheus 2.4 renders no OpenMetrics, and a scraper
/// that asks for OpenMetrics in `Accept` falls back to the text format by the protocol's own
/// negotiation. No authentication: the documented places are loopback or a Unix socket in a
/// folder whose permissions decide who reads. Binding, the pipeline and shutdown are
/// `HTTPServer`'s.
public final class MetricsEndpoint: Sendable {
    /// The content type of every answer of `/metrics`.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let server: HTTPServer
    private let address: MetricsListenAddress

    private init(server: HTTPServer, address: MetricsListenAddress) {
        self.server = server
        self.address = address
    }

    /// Where it listens: for TCP the port the kernel chose when the configuration said 0.
    public var boundAddress: MetricsListenAddress {
        guard case .tcp(let host, _) = address else { return address }
        return .tcp(host: host, port: server.port)
    }

    /// Binds `address` and serves `metrics` until `close()`.
    /// - Throws: `DaemonStartError.metricsUnavailable` when the address cannot be bound.
    public static func start(_ address: MetricsListenAddress, metrics: DaemonMetrics, group: any EventLoopGroup,
                             logger: Logger) async throws(DaemonStartError) -> MetricsEndpoint {
        let listen: HTTPListenAddress = switch address {
        case .tcp(let host, let port): .tcp(host: host, port: port)
        case .unix(let path): .unix(path: path)
        }
        let configuration = HTTPServer.Configuration(address: listen, maxBodyBytes: 0, keepAlive: false)
        do {
            let server = try await HTTPServer.start(configuration, group: group) { request, writer in
                answer(request, metrics: metrics, writer: writer)
            }
            let endpoint = MetricsEndpoint(server: server, address: address)
            logger.notice("serving metrics", metadata: ["metrics_listen": "\(endpoint.boundAddress)"])
            return endpoint
        } catch {
            throw .metricsUnavailable(address: address.description, reason: error.reason)
        }
    }

    /// Stops listening (a scrape in progress finishes) and removes a Unix socket file.
    public func close() async {
        await server.shutdown()
    }

    /// 404 for another path, 405 for another method; a scrape reads the figures (downloads
    /// are an actor's: it awaits) off the event loop, then answers.
    private static func answer(_ request: HTTPServerRequest, metrics: DaemonMetrics, writer: HTTPResponseWriter) {
        guard request.path == "/metrics" else {
            writer.respond(text("not found: the metrics are at /metrics\n", status: .notFound))
            return
        }
        guard request.head.method == .GET || request.head.method == .HEAD else {
            var response = text("only GET /metrics\n", status: .methodNotAllowed)
            response.headers.add(name: "Allow", value: "GET, HEAD")
            writer.respond(response)
            return
        }
        Task {
            let body = await metrics.scrape()
            writer.respond(HTTPServerResponse(status: .ok, headers: ["Content-Type": contentType], body: ByteBuffer(bytes: body)))
        }
    }

    private static func text(_ text: String, status: HTTPResponseStatus) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: ByteBuffer(string: text))
    }
}
