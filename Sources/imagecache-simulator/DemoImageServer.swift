import NIOCore
import ProviderSimulator

/// The demo's image host: `SimulatedImageRoute`'s pictures, sent the way a real image CDN
/// would be felt from far away, so the demo has something to show.
///
/// On loopback a thumbnail arrives in a millisecond, before a grid could scroll it away:
/// recycling would cancel nothing and progress bars would jump from 0 to 100 %. Here small
/// bodies (thumbnails) come at about 96 KiB/s and large ones (full-size downloads) at about
/// 2 MiB/s, in small pieces, so visible slots show progress, recycled ones are cancelled
/// while their bytes flow (and the daemon's `bytesDiscarded` proves it), and a download's bar
/// moves. `Range` requests are answered with 206 (with `If-Range` against the route's ETag),
/// as the daemon's resumable downloads expect.
enum DemoImageServer {
    /// Bodies up to this size are paced as thumbnails.
    static let thumbnailBytes = 256 * 1024
    /// One piece every this many milliseconds.
    static let intervalMilliseconds: Int64 = 40
    /// Piece sizes: about 96 KiB/s for thumbnails, 2 MiB/s for larger bodies.
    static func pieceSize(bodyBytes: Int) -> Int {
        bodyBytes <= thumbnailBytes ? 4 * 1024 : 80 * 1024
    }

    /// Starts the server on a free port of 127.0.0.1, recording what it serves in `log`.
    static func start(log: DemoImageLog = DemoImageLog()) async throws -> LoopbackHTTPServer {
        try await LoopbackHTTPServer(streaming: { request, writer in
            log.requested(request.path)
            guard let response = SimulatedImageRoute.handle(request), response.status == 200 else {
                writer.respond(SimulatedImageRoute.handle(request) ?? .text("not found\n", status: 404))
                return
            }
            let (status, headers, body) = ranged(response, request: request)
            writer.writeHead(status: status, headers: headers + [("Content-Length", String(body.count))])
            send(body, from: 0, piece: pieceSize(bodyBytes: response.body.count), to: writer) { log.completed(request.path) }
        }, onAbort: { request, bytes in
            log.aborted(request.path, bytes: bytes)
        })
    }

    /// The whole response, or the part a satisfiable `Range: bytes=N-[M]` asks for (206),
    /// or 416 when it starts past the end.
    static func ranged(_ response: SimulatedResponse, request: SimulatedRequest) -> (Int, [(String, String)], [UInt8]) {
        let body = response.body
        let etag = response.headers.first { $0.0 == "ETag" }?.1
        guard let range = request.header("Range"), range.hasPrefix("bytes="),
              request.header("If-Range") == nil || request.header("If-Range") == etag else {
            return (200, response.headers, body)
        }
        let bounds = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard let start = bounds.first.flatMap({ Int($0) }) else { return (200, response.headers, body) }
        guard start < body.count else {
            return (416, [("Content-Range", "bytes */\(body.count)")], [])
        }
        let end = min(body.count - 1, bounds.count > 1 ? Int(bounds[1]) ?? body.count - 1 : body.count - 1)
        guard end >= start else { return (200, response.headers, body) }
        return (206, response.headers + [("Content-Range", "bytes \(start)-\(end)/\(body.count)")], Array(body[start...end]))
    }

    /// Writes `body` a piece at a time, one piece per interval, until done or the client
    /// goes away (a cancelled transfer).
    static func send(_ body: [UInt8], from offset: Int, piece: Int, to writer: ResponseWriter,
                     completed: @escaping @Sendable () -> Void = {}) {
        guard writer.isOpen else { return }
        guard offset < body.count else {
            writer.end()
            completed()
            return
        }
        let next = min(body.count, offset + piece)
        writer.write(Array(body[offset..<next]))
        writer.after(.milliseconds(intervalMilliseconds)) { send(body, from: next, piece: piece, to: writer, completed: completed) }
    }
}
