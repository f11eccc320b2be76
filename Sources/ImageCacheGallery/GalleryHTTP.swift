import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The plain HTTP half of the gallery: the page and its assets, delivered images, and the
/// refusals of `RequestGuard`. One instance serves every connection.
struct GalleryHTTP: Sendable {
    let requestGuard: RequestGuard
    let delivered: DeliveredPaths

    typealias Channel = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    /// Answers the requests of one connection (keep-alive) until the browser closes it.
    /// `refusedUpgrade` holds the head of an upgrade request that was refused: NIO's upgrade
    /// handler keeps that head to itself and passes on only the request's end.
    func serve(_ channel: Channel, refusedUpgrade: RefusedUpgrade) async {
        try? await channel.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            for try await part in inbound {
                switch part {
                case .head(let h): head = h
                case .body: break   // GET and HEAD only: a body is ignored
                case .end:
                    guard let request = head ?? refusedUpgrade.take() else {
                        // An upgrade to a protocol this server does not speak.
                        var closing = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/")
                        closing.headers.add(name: "Connection", value: "close")
                        try await write(.text("bad request: unsupported upgrade", status: .badRequest), for: closing, to: outbound)
                        return
                    }
                    head = nil
                    let response = await respond(to: request)
                    try await write(response, for: request, to: outbound)
                    if !request.isKeepAlive { return }
                }
            }
        }
    }

    /// One answer: status, headers, body.
    struct Response: Sendable {
        var status: HTTPResponseStatus
        var headers: [(String, String)]
        var body: [UInt8]

        static func text(_ text: String, status: HTTPResponseStatus) -> Response {
            Response(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array((text + "\n").utf8))
        }
    }

    /// What `request` gets.
    func respond(to request: HTTPRequestHead) async -> Response {
        switch requestGuard.check(request) {
        case .refused(let status, let reason):
            return .text(reason, status: status)
        case .allowed(.addSlash):
            return Response(status: .movedPermanently, headers: [("Location", "/\(requestGuard.token.text)/")], body: [])
        case .allowed(.page):
            return asset(GalleryAssets.page)
        case .allowed(.asset(let name)):
            guard let asset = GalleryAssets.named(name) else { return .text("not found", status: .notFound) }
            return self.asset(asset)
        case .allowed(.webSocket):
            // Reaches here only when the upgrade was not asked for properly.
            return .text("this endpoint speaks WebSocket only", status: .upgradeRequired)
        case .allowed(.image(let path)):
            return image(at: path)
        case .allowed(.notFound):
            return .text("not found", status: .notFound)
        }
    }

    private func asset(_ asset: GalleryAssets.Asset) -> Response {
        var headers = [("Content-Type", asset.contentType), ("Cache-Control", "no-store")]
        if asset.contentType.hasPrefix("text/html") {
            headers.append(("Content-Security-Policy", contentSecurityPolicy))
        }
        return Response(status: .ok, headers: headers, body: asset.bytes)
    }

    /// The page may load its own scripts, styles and images, and open its WebSocket; nothing
    /// from anywhere else, no inline script, and no framing by another site.
    private var contentSecurityPolicy: String {
        let sockets = requestGuard.acceptedHosts.map { "ws://\($0)" }.joined(separator: " ")
        return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
            + "connect-src 'self' \(sockets); base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// A file the daemon delivered on this bridge, or 404. The browser's path is only a key
    /// into `delivered`; it is never opened unless the daemon handed it out.
    private func image(at path: String?) -> Response {
        guard let path, let mime = delivered.mime(of: path) else {
            return .text("not found: only images the daemon delivered to this gallery are served", status: .notFound)
        }
        do {
            let bytes = try DeliveredFile.contents(of: path)
            // Delivered files are immutable (their name is their content's key).
            return Response(status: .ok, headers: [("Content-Type", mime), ("Cache-Control", "private, max-age=86400, immutable")], body: bytes)
        } catch {
            return .text("gone: the daemon's cache no longer holds this file; the page asks again", status: .notFound)
        }
    }

    private func write(_ response: Response, for request: HTTPRequestHead, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) async throws {
        var headers = HTTPHeaders(response.headers)
        headers.add(name: "Content-Length", value: String(response.body.count))
        headers.add(name: "Referrer-Policy", value: "no-referrer")   // the token is in the URL: never pass it on
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "X-Frame-Options", value: "DENY")
        headers.add(name: "Cross-Origin-Resource-Policy", value: "same-origin")
        if !request.isKeepAlive { headers.add(name: "Connection", value: "close") }
        try await outbound.write(.head(HTTPResponseHead(version: request.version, status: response.status, headers: headers)))
        if request.method != .HEAD, !response.body.isEmpty {
            try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body))))
        }
        try await outbound.write(.end(nil))
    }
}

/// The head of a WebSocket upgrade the guard refused, kept for the HTTP half to answer (403).
final class RefusedUpgrade: Sendable {
    private let head = NIOLockedValueBox<HTTPRequestHead?>(nil)
    func keep(_ request: HTTPRequestHead) { head.withLockedValue { $0 = request } }
    func take() -> HTTPRequestHead? { head.withLockedValue { h in defer { h = nil }; return h } }
}
