import HTTPServing
import NIOCore
import NIOHTTP1

/// The plain HTTP half of the gallery: the page and its assets, delivered images, and the
/// refusals of `RequestGuard` (a WebSocket upgrade it refused included). Served by
/// `HTTPServer`, which owns the connections.
struct GalleryHTTP: Sendable {
    let requestGuard: RequestGuard
    let delivered: DeliveredPaths

    /// GET and HEAD only: a body is not wanted, but one as long as a form's is read (and
    /// ignored) so that such a request still gets the guard's refusal rather than a 413.
    static let maxBodyBytes = 64 << 10

    /// What `request` gets, with the headers every answer of the gallery carries.
    func response(to request: HTTPRequestHead) async -> HTTPServerResponse {
        Self.finished(await respond(to: request))
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

    /// `response` as written: the token is in the URL, so no referrer ever passes it on; no
    /// content sniffing, no framing, no other origin reading it. Content-Length, `HEAD` and
    /// keep-alive are the server's.
    static func finished(_ response: Response) -> HTTPServerResponse {
        var headers = HTTPHeaders(response.headers)
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "X-Frame-Options", value: "DENY")
        headers.add(name: "Cross-Origin-Resource-Policy", value: "same-origin")
        return HTTPServerResponse(status: response.status, headers: headers, body: ByteBuffer(bytes: response.body))
    }
}
