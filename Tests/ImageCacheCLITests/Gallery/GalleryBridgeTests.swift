import Foundation
import ImageCacheGallery
import NIOCore
import Testing
import TestSupport
@testable import ImageCacheCLI

/// The gallery bridge's door, over real HTTP on
/// 127.0.0.1: the token, the `Host` and `Origin` checks, and images served only when the
/// daemon delivered them on this bridge. The page itself is tested in a real browser
/// (Tests/Browser/gallery_test.py).
@Suite("gallery bridge security", .timeLimit(.minutes(3)))
struct GalleryBridgeTests {
    /// A gallery on a socket nothing listens on: enough for every check made before a daemon is needed.
    static func withGallery(socket: String = "/nonexistent/imagecached.sock", _ body: (GalleryServer) async throws -> Void) async throws {
        let server = try await GalleryServer.start(.init(socketPath: socket))
        do {
            try await body(server)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    static func host(_ server: GalleryServer) -> (String, String) { ("Host", "127.0.0.1:\(server.port)") }

    @Test func thePageAnswersOnlyUnderItsToken() async throws {
        try await Self.withGallery { server in
            let page = try await withTimeout(seconds: 20) { try await RawHTTP.get(port: server.port, "/\(server.token.text)/", headers: [Self.host(server)]) }
            #expect(page.status == 200)
            #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(page.headers["content-security-policy"]?.contains("script-src 'self'") == true)
            #expect(page.headers["referrer-policy"] == "no-referrer")
            #expect(page.text.contains("<title>imagecached gallery</title>"))

            let wrongToken = String(repeating: "0", count: server.token.text.count)
            for path in ["/", "/app.js", "/\(wrongToken)/", "/\(wrongToken)/app.js", "/\(server.token.text.dropLast())/", "/\(server.token.text)x/"] {
                let refused = try await withTimeout(seconds: 20) { try await RawHTTP.get(port: server.port, path, headers: [Self.host(server)]) }
                #expect(refused.status == 403, "\(path): \(refused.status)")
                #expect(!refused.text.contains("<html"), "\(path) leaked the page")
            }
            let bare = try await withTimeout(seconds: 20) { try await RawHTTP.get(port: server.port, "/\(server.token.text)", headers: [Self.host(server)]) }
            #expect(bare.status == 301)
            #expect(bare.headers["location"] == "/\(server.token.text)/")
        }
    }

    @Test func aForeignOrMissingHostIsRefused() async throws {
        try await Self.withGallery { server in
            let path = "/\(server.token.text)/"
            for headers in [[("Host", "evil.example:\(server.port)")], [("Host", "127.0.0.1:\(server.port + 1)")], [("Host", "127.0.0.1")], [],
                            [("Host", "127.0.0.1:\(server.port)"), ("Host", "evil.example")]] {
                let answer = try await withTimeout(seconds: 20) { try await RawHTTP.get(port: server.port, path, headers: headers) }
                #expect(answer.status == 403, "\(headers): \(answer.status)")
            }
            let local = try await withTimeout(seconds: 20) { try await RawHTTP.get(port: server.port, path, headers: [("Host", "localhost:\(server.port)")]) }
            #expect(local.status == 200)
        }
    }

    @Test func aForeignOriginIsRefusedForPagesAndWebSockets() async throws {
        try await Self.withGallery { server in
            let path = "/\(server.token.text)/app.js"
            let foreign = try await withTimeout(seconds: 20) {
                try await RawHTTP.get(port: server.port, path, headers: [Self.host(server), ("Origin", "http://evil.example")])
            }
            #expect(foreign.status == 403)
            let nullOrigin = try await withTimeout(seconds: 20) {
                try await RawHTTP.get(port: server.port, path, headers: [Self.host(server), ("Origin", "null")])
            }
            #expect(nullOrigin.status == 403)
            let same = try await withTimeout(seconds: 20) {
                try await RawHTTP.get(port: server.port, path, headers: [Self.host(server), ("Origin", "http://127.0.0.1:\(server.port)")])
            }
            #expect(same.status == 200)
            #expect(same.headers["content-type"]?.hasPrefix("text/javascript") == true)

            for (origin, wsPath) in [("http://evil.example", "/\(server.token.text)/ws"), ("http://127.0.0.1:\(server.port)", "/ws")] {
                let connection = try await RawHTTP.connect(port: server.port)
                let answer = try await withTimeout(seconds: 20) {
                    try await connection.executeThenClose { inbound, outbound in
                        try await RawWebSocket(inbound: inbound, outbound: outbound)
                            .upgrade(path: wsPath, headers: [Self.host(server), ("Origin", origin)])
                    }
                }
                #expect(answer.status == 403, "\(origin) \(wsPath): \(answer.status)")
            }
        }
    }

    @Test func onlyPathsTheDaemonDeliveredOnThisBridgeAreServed() async throws {
        try await LiveDaemon.with { live in
            try await Self.withGallery(socket: live.socket) { server in
                let token = server.token.text
                @Sendable func image(_ path: String) -> String {
                    "/\(token)/image?path=" + (path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
                }
                for path in ["/etc/passwd", live.paths.config, live.paths.cache, "../../etc/passwd"] {
                    let refused = try await withTimeout(seconds: 20) { try await RawHTTP.get(port: server.port, image(path), headers: [Self.host(server)]) }
                    #expect(refused.status == 404, "\(path): \(refused.status)")
                }

                // A tab's session: a search, then a thumbnail the daemon delivers through the bridge.
                let delivered = try await withTimeout(seconds: 60) { () -> String in
                    let connection = try await RawHTTP.connect(port: server.port)
                    return try await connection.executeThenClose { inbound, outbound in
                        let socket = RawWebSocket(inbound: inbound, outbound: outbound)
                        let upgraded = try await socket.upgrade(path: "/\(server.token.text)/ws",
                                                                headers: [Self.host(server), ("Origin", "http://127.0.0.1:\(server.port)")])
                        #expect(upgraded.status == 101)
                        try await socket.send(#"{"jsonrpc":"2.0","id":1,"method":"search","params":{"query":"mountain lake","perPage":3}}"#)
                        let search = try #require(try await Self.answer(to: 1, from: socket))
                        let photos = try #require((search["result"] as? [String: Any])?["photos"] as? [[String: Any]])
                        let photo = try #require(photos.first?["id"] as? String)
                        // A path named in a request is not a delivery.
                        try await socket.send(#"{"jsonrpc":"2.0","id":2,"method":"cache.evict","params":{"url":"http://127.0.0.1/\#(live.paths.config)"}}"#)
                        _ = try await Self.answer(to: 2, from: socket)
                        try await socket.send(#"{"jsonrpc":"2.0","id":"show-1","method":"thumbnail.show","params":{"slot":0,"photo":"\#(photo)","size":200}}"#)
                        let show = try #require(try await Self.answer(to: "show-1", from: socket))
                        return try #require((show["result"] as? [String: Any])?["path"] as? String, "\(show)")
                    }
                }
                let served = try await withTimeout(seconds: 20) { try await RawHTTP.get(port: server.port, image(delivered), headers: [Self.host(server)]) }
                #expect(served.status == 200)
                #expect(served.headers["content-type"] == "image/jpeg")
                #expect(served.body == Array(try Data(contentsOf: URL(fileURLWithPath: delivered))))
                #expect(server.delivered.count == 1)

                // Its neighbours in the cache, and the config named in a request, stay out of reach.
                let folder = (delivered as NSString).deletingLastPathComponent
                for sibling in try FileManager.default.contentsOfDirectory(atPath: folder) where folder + "/" + sibling != delivered {
                    let refused = try await withTimeout(seconds: 20) { try await RawHTTP.get(port: server.port, image(folder + "/" + sibling), headers: [Self.host(server)]) }
                    #expect(refused.status == 404)
                }
                let config = try await withTimeout(seconds: 20) { try await RawHTTP.get(port: server.port, image(live.paths.config), headers: [Self.host(server)]) }
                #expect(config.status == 404)
                // The same delivered path with a foreign Host is still refused.
                let rebound = try await withTimeout(seconds: 20) {
                    try await RawHTTP.get(port: server.port, image(delivered), headers: [("Host", "evil.example:\(server.port)")])
                }
                #expect(rebound.status == 403)
            }
        }
    }

    /// Reads frames until the answer with `id` (notifications and other answers skipped).
    static func answer(to id: some Equatable & Sendable, from socket: RawWebSocket) async throws -> [String: Any]? {
        while let text = try await socket.receive() {
            guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { continue }
            if let found = object["id"] as? Int, let wanted = id as? Int, found == wanted { return object }
            if let found = object["id"] as? String, let wanted = id as? String, found == wanted { return object }
        }
        return nil
    }

    @Test func theDeliveredTableIsBoundedOldestOutFirstAndTakesOnlyAbsolutePaths() {
        let table = DeliveredPaths(capacity: 3)
        for n in 1...5 { table.remember("/cache/\(n)", mime: "image/jpeg") }
        table.remember("relative/6", mime: "image/png")
        #expect(table.count == 3)
        #expect(table.mime(of: "/cache/1") == nil && table.mime(of: "/cache/2") == nil)
        #expect(table.mime(of: "/cache/5") == "image/jpeg")
        #expect(table.mime(of: "relative/6") == nil)
        table.remember("/cache/5", mime: "image/png")   // delivered again: still one entry
        #expect(table.count == 3 && table.mime(of: "/cache/5") == "image/png")
    }

    @Test func theTokenComparisonNeedsEveryCharacter() throws {
        let token = try #require(GalleryToken("abcdefghijklmnop0123"))
        #expect(token.matches(Array("abcdefghijklmnop0123".utf8)))
        #expect(!token.matches(Array("abcdefghijklmnop012".utf8)))
        #expect(!token.matches(Array("abcdefghijklmnop01234".utf8)))
        #expect(!token.matches(Array("Abcdefghijklmnop0123".utf8)))
        #expect(!token.matches([UInt8]()))
        #expect(GalleryToken("short") == nil)
        #expect(GalleryToken("abcdefghijklmnop/123") == nil)
        let random = GalleryToken()
        #expect(random.text.count == 64)
        #expect(random != GalleryToken())
    }
}
