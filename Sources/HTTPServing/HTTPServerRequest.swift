import NIOCore
import NIOHTTP1

/// One whole request, as `HTTPServer` hands it to a handler: the head as NIO parsed it and the
/// body collected within the server's limit.
///
/// NIO's own types, not copies: a handler that reads only the method and path (the metrics
/// endpoint) pays for nothing more, and one that wants another shape (the simulator's
/// `SimulatedRequest`) converts once.
public struct HTTPServerRequest: Sendable {
    /// The request line and headers.
    public var head: HTTPRequestHead
    /// The body (empty when there was none); never longer than the server's `maxBodyBytes`.
    public var body: ByteBuffer

    /// A request as a handler sees it; public so that a handler can be exercised without a socket.
    public init(head: HTTPRequestHead, body: ByteBuffer = ByteBuffer()) {
        self.head = head
        self.body = body
    }

    /// The target's path, without its query (`/metrics` for `/metrics?x=1`).
    public var path: Substring {
        head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? head.uri[...]
    }
}
