import HTTPServing
import NIOCore
import NIOHTTP1

/// The simulator writes through the package's one response writer (`HTTPResponseWriter`:
/// whole, paced, stalled, endless or broken bodies); the name is the one the tests, the demo
/// and the benchmarks write against.
public typealias ResponseWriter = HTTPResponseWriter

extension HTTPResponseWriter {
    /// A whole `SimulatedResponse` at once (Content-Length added when missing).
    public func respond(_ response: SimulatedResponse) {
        respond(HTTPServerResponse(status: HTTPResponseStatus(statusCode: response.status), headers: HTTPHeaders(response.headers),
                                   body: ByteBuffer(bytes: response.body)))
    }

    /// The status line and headers, in the simulator's shape. Without Content-Length the
    /// body is sent chunked.
    public func writeHead(status: Int, headers: [(String, String)]) {
        writeHead(status: HTTPResponseStatus(statusCode: status), headers: HTTPHeaders(headers))
    }

    /// A piece of body; the future completes when it is handed to the socket (see
    /// `write(_: ByteBuffer)`).
    @discardableResult
    public func write(_ bytes: [UInt8]) -> EventLoopFuture<Void> {
        write(ByteBuffer(bytes: bytes))
    }
}
