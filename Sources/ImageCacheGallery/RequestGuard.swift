import Foundation
import NIOHTTP1

/// The gallery's door: every HTTP request and WebSocket upgrade passes these checks before
/// anything else reads it.
///
/// - `Host` must name this server by loopback address or `localhost` with its port: a page on
///   another site whose name an attacker re-points at 127.0.0.1 (DNS rebinding) sends its own
///   host name and is refused.
/// - `Origin`, when the browser sends it (scripts' requests, every WebSocket upgrade), must be
///   this server's own origin: another site's script cannot open a session or read answers.
/// - The first path segment must be the token (`GalleryToken`), compared in constant time.
/// - Only `GET` and `HEAD`.
///
/// Every refusal is a 403 (405 for another method) with a plain reason and nothing else.
public struct RequestGuard: Sendable {
    /// What a request may reach, once it passed.
    public enum Route: Sendable, Equatable {
        /// The page itself (`/TOKEN/`).
        case page
        /// `/TOKEN` without the slash: redirected so that relative URLs resolve under the token.
        case addSlash
        /// A static asset of the page, by name (`app.js`).
        case asset(String)
        /// The WebSocket endpoint (`/TOKEN/ws`).
        case webSocket
        /// A delivered image (`/TOKEN/image?path=…`), with the path as the query gave it.
        case image(path: String?)
        /// Anything else under the token.
        case notFound
    }

    /// The guard's answer.
    public enum Verdict: Sendable, Equatable {
        /// The request may go on to `Route`.
        case allowed(Route)
        /// The request is answered with `status` and the plain-text `reason`, nothing else.
        case refused(status: HTTPResponseStatus, reason: String)
    }

    /// The token every path must start with.
    public let token: GalleryToken
    /// The port the server listens on (part of the only accepted `Host` values).
    public let port: Int

    /// A guard for a server on `port` with `token`.
    public init(token: GalleryToken, port: Int) {
        self.token = token
        self.port = port
    }

    /// The `Host` values this server answers to.
    public var acceptedHosts: [String] { ["127.0.0.1:\(port)", "localhost:\(port)"] }

    /// Checks a request head.
    public func check(_ head: HTTPRequestHead) -> Verdict {
        let hosts = head.headers["Host"]
        guard hosts.count == 1, let host = hosts.first?.lowercased(), acceptedHosts.contains(host) else {
            return .refused(status: .forbidden, reason: "forbidden: the Host header must be one of \(acceptedHosts.joined(separator: ", "))")
        }
        for origin in head.headers["Origin"] where origin.lowercased() != "http://" + host {
            return .refused(status: .forbidden, reason: "forbidden: cross-origin request (Origin \(origin.prefix(100)))")
        }
        let uri = head.uri
        guard uri.hasPrefix("/") else { return .refused(status: .forbidden, reason: "forbidden: no token") }
        let afterSlash = uri.utf8.dropFirst()
        let segmentEnd = afterSlash.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? afterSlash.endIndex
        guard token.matches(afterSlash[afterSlash.startIndex..<segmentEnd]) else {
            return .refused(status: .forbidden, reason: "forbidden: this address needs the gallery's token (the URL `imagecache gallery` printed)")
        }
        guard head.method == .GET || head.method == .HEAD else {
            return .refused(status: .methodNotAllowed, reason: "method not allowed")
        }
        let rest = String(decoding: afterSlash[segmentEnd...], as: UTF8.self)
        let (path, query) = Self.split(rest)
        switch path {
        case "": return .allowed(.addSlash)
        case "/", "/index.html": return .allowed(.page)
        case "/ws": return .allowed(.webSocket)
        case "/image": return .allowed(.image(path: query.flatMap { Self.queryValue("path", in: $0) }))
        default:
            let name = String(path.dropFirst())
            return .allowed(GalleryAssets.named(name) != nil ? .asset(name) : .notFound)
        }
    }

    static func split(_ text: String) -> (path: String, query: String?) {
        guard let mark = text.firstIndex(of: "?") else { return (text, nil) }
        return (String(text[..<mark]), String(text[text.index(after: mark)...]))
    }

    /// The percent-decoded value of `name` in a query (`+` is a space, as forms write it).
    static func queryValue(_ name: String, in query: String) -> String? {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name else { continue }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncodingStrictly()
        }
        return nil
    }
}

extension String {
    /// Percent-decoding without Foundation; nil for a malformed escape or bytes that are not UTF-8.
    func removingPercentEncodingStrictly() -> String? {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(Self.hexValue), let low = iterator.next().flatMap(Self.hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
