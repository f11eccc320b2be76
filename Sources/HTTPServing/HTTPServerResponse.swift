import NIOCore
import NIOHTTP1

/// A whole response, written at once by `HTTPResponseWriter.respond(_:)`.
///
/// Most answers are whole (a page, a scrape, an image); the writer's piecewise calls exist for
/// the ones that are not (slow, stalled, endless or broken bodies).
public struct HTTPServerResponse: Sendable {
    /// The status line's code.
    public var status: HTTPResponseStatus
    /// The headers as given; `Content-Length` is added when missing, `Connection: close` when
    /// the connection ends with this response.
    public var headers: HTTPHeaders
    /// The body; not sent in answer to `HEAD` (its length still is).
    public var body: ByteBuffer

    /// A response of `status` with these headers and body.
    public init(status: HTTPResponseStatus = .ok, headers: HTTPHeaders = [:], body: ByteBuffer = ByteBuffer()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
