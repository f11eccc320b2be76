import CCurl
import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// A host that answers badly is that host's `upstream_error`, and never the next request's
/// failure: answers written byte for byte by a raw-socket server (`ScriptedHTTPServer`), on
/// kept-alive connections the engine would otherwise reuse.
@Suite("Network: a malformed answer never poisons the next request", .timeLimit(.minutes(3)))
struct MalformedAnswerTests {
    /// Runs `body` with a scripted server and an engine allowed to reach it, stopping both after.
    private func withScript<T: Sendable>(_ script: [ScriptedHTTPServer.Answer],
                               options: (inout TransferEngine.Options) -> Void = { _ in },
                               _ body: (ScriptedHTTPServer, TransferEngine) async throws -> T) async throws -> T {
        let server = try ScriptedHTTPServer(script: script)
        let engine = NetworkFixture.engine(options: options)
        defer {
            engine.shutdown()
            server.stop()
        }
        return try await body(server, engine)
    }

    private func get(_ engine: TransferEngine, _ url: String) async throws -> TransferResult {
        try await withTimeout(seconds: 60) { try await engine.start(TransferRequest(url: url)).result() }
    }

    static let bodylessHeads = [
        "HTTP/1.1 204 No Content\r\n\r\n",
        "HTTP/1.1 204 No Content\r\nContent-Length: 11\r\n\r\n",
        "HTTP/1.1 304 Not Modified\r\nContent-Length: 11\r\n\r\n",
    ]

    @Test("a bodyless answer followed by a body: itself upstream_error, the next fetch from the host succeeds on a new connection",
          arguments: bodylessHeads)
    func bodylessWithBody(head: String) async throws {
        let photo = try NetworkFixture.photo()
        try await withScript([.raw(head, leftover: "hello there"), .ok(photo)]) { server, engine in
            let first = await rpcError { _ = try await get(engine, server.url("/empty")) }
            #expect(first?.kind == .upstreamError, "\(String(describing: first))")
            #expect(first?.data.status == Int(head.split(separator: " ")[1]))
            #expect(first?.message.hasPrefix("HTTP \(head.split(separator: " ")[1])") == true, "\(String(describing: first))")
            let next = try await get(engine, server.url("/photo.jpg"))
            #expect(next.body == .memory(photo))
            // Not even a retry was needed: the connection that carried the bodyless answer was closed.
            #expect(server.requests == 2)
            #expect(server.connections == 2)
            #expect(engine.stats.retries == 0)
        }
    }

    @Test("a provider call after a 204 with a body gets its JSON (the same transfer layer)")
    func providerAfterBodyless() async throws {
        let json = Array(#"{"results":[]}"#.utf8)
        try await withScript([.raw("HTTP/1.1 204 No Content\r\n\r\n", leftover: "{\"smuggled\":1}"),
                              .ok(json, contentType: "application/json")]) { server, engine in
            let first = try await withTimeout(seconds: 60) { try await engine.fetch(HTTPRequest(url: server.url("/search"))) }
            #expect(first.status == 204 && first.body.isEmpty)
            let second = try await withTimeout(seconds: 60) { try await engine.fetch(HTTPRequest(url: server.url("/search"))) }
            #expect(second.status == 200 && second.body == json)
            #expect(server.connections == 2)
        }
    }

    @Test("bytes past a body's announced end: the next request is sent again at once on a new connection, and succeeds")
    func leftoverAfterBody() async throws {
        let photo = try NetworkFixture.photo()
        try await withScript([.ok(photo, leftover: "trailing junk"), .ok(photo), .ok(photo)]) { server, engine in
            let first = try await get(engine, server.url("/a.jpg"))
            #expect(first.body == .memory(photo))
            let next = try await get(engine, server.url("/b.jpg"))
            #expect(next.body == .memory(photo))
            #expect(next.requests == 2)
            #expect(server.requests == 3)
            #expect(server.connections == 2)
            #expect(engine.stats.retries == 1)
        }
    }

    @Test("the resend on a new connection is not one of the job's retries: with none allowed, the next request still succeeds")
    func leftoverWithoutRetries() async throws {
        let photo = try NetworkFixture.photo()
        try await withScript([.ok(photo, leftover: "trailing junk"), .ok(photo), .ok(photo)],
                             options: { $0.retry = RetryPolicy(maxRetries: 0) }) { server, engine in
            _ = try await get(engine, server.url("/a.jpg"))
            let next = try await get(engine, server.url("/b.jpg"))
            #expect(next.body == .memory(photo))
            #expect(server.connections == 2)
        }
    }

    @Test("an answer that is not HTTP at all (HTTP/0.9) → upstream_error saying so, not forbidden, and not retried")
    func notHTTP() async throws {
        try await withScript([.raw("garbage, not HTTP\r\n", close: true)]) { server, engine in
            let error = await rpcError { _ = try await get(engine, server.url("/x.jpg")) }
            #expect(error?.kind == .upstreamError, "\(String(describing: error))")
            #expect(error?.message.contains("not well-formed HTTP") == true, "\(String(describing: error))")
            #expect(error?.message.contains("HTTP/0.9") == true, "\(String(describing: error))")
            #expect(error?.data.status == nil)
            #expect(server.requests == 1)
        }
    }

    @Test("other malformed answers → upstream_error, each on its first request", arguments: [
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
        "HTTP/7.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 9\r\n\r\nnot gzip!",
    ])
    func malformed(answer: String) async throws {
        try await withScript([.raw(answer, close: true)]) { server, engine in
            // An API call asks for content encodings, so the gzip case is one for `fetch`.
            let error = await rpcError { _ = try await withTimeout(seconds: 60) { try await engine.fetch(HTTPRequest(url: server.url("/x"))) } }
            #expect(error?.kind == .upstreamError, "\(String(describing: error))")
            #expect(error?.message.contains("not well-formed HTTP") == true, "\(String(describing: error))")
            #expect(server.requests == 1)
        }
    }

    @Test("a transfer that failed mid-answer leaves its connection closed: the host's next answer arrives whole")
    func failedTransferNotReused() async throws {
        let photo = try NetworkFixture.photo()
        // The broken chunk leaves the rest of its answer unread, on a connection kept open.
        try await withScript([.raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\nrest of it\r\n0\r\n\r\n"),
                              .ok(photo)]) { server, engine in
            let error = await rpcError { _ = try await get(engine, server.url("/broken.jpg")) }
            #expect(error?.kind == .upstreamError, "\(String(describing: error))")
            let next = try await get(engine, server.url("/photo.jpg"))
            #expect(next.body == .memory(photo))
            #expect(server.requests == 2)
            #expect(server.connections == 2)
        }
    }

    @Test("no answer at all → upstream_error, after the bounded retries")
    func emptyReply() async throws {
        try await withScript([.raw("", close: true)]) { server, engine in
            let error = await rpcError { _ = try await get(engine, server.url("/x.jpg")) }
            #expect(error?.kind == .upstreamError, "\(String(describing: error))")
            #expect(server.requests == 3)
        }
    }

    @Test("a redirect to a forbidden scheme is still forbidden, and the host's next answer still arrives")
    func redirectToForbiddenScheme() async throws {
        let photo = try NetworkFixture.photo()
        try await withScript([.raw("HTTP/1.1 302 Found\r\nLocation: ftp://127.0.0.1/x\r\nContent-Length: 0\r\n\r\n"),
                              .ok(photo)]) { server, engine in
            let error = await rpcError { _ = try await get(engine, server.url("/moved")) }
            #expect(error?.kind == .forbidden, "\(String(describing: error))")
            let next = try await get(engine, server.url("/photo.jpg"))
            #expect(next.body == .memory(photo))
        }
    }

    @Test("a provider's malformed answer: an expired stored search page answers, flagged stale, as for a 5xx")
    func staleSearchPageOnMalformedAnswer() async throws {
        let sim = try await SimulatedProviders.start()
        let store = InMemorySearchPageStore()
        let wallClock = WallClock()
        try await withScript([.raw("garbage, not HTTP\r\n", close: true)]) { server, engine in
            // Two coordinators over one page store: the first reaches the simulator, the second a
            // provider that answers garbage.
            func coordinator(_ apiURL: String) -> SearchCoordinator {
                let settings = ProviderSettings(apiKey: ProviderAPISimulator.defaultKeys["unsplash"], apiURL: apiURL)
                let client = ProviderClient(provider: makePhotoProvider(.unsplash, settings: settings), fetcher: engine,
                                            limiter: RateLimiter(provider: .unsplash, burst: 100, perSecond: 100))
                return SearchCoordinator(clients: [client], store: store, searchTTL: .seconds(3600), wallClock: { wallClock.now })
            }
            let search = SearchParams(query: "lighthouse")
            let reaching = coordinator(sim.apiURL(for: "unsplash"))
            let garbled = coordinator(server.url("/unsplash"))
            let fresh = try await withTimeout(seconds: 60) { try await reaching.search(search) }
            wallClock.advance(seconds: 7200)
            let stale = try await withTimeout(seconds: 60) { try await garbled.search(search) }
            #expect(stale.stale && stale.fromCache)
            #expect(stale.photos == fresh.photos)
            #expect(server.requests == 1)
        }
        await sim.shutdown()
    }

    @Test("curl refusing a protocol: forbidden before the request went out, upstream_error after it")
    func unsupportedProtocolMapping() {
        let refused = TransferFailure.error(for: CURLE_UNSUPPORTED_PROTOCOL, url: "http://h/x", detail: "ftp", requestSent: false)
        #expect(refused.0.kind == .forbidden)
        let answered = TransferFailure.error(for: CURLE_UNSUPPORTED_PROTOCOL, url: "http://h/x",
                                             detail: "Received HTTP/0.9 when not allowed", requestSent: true)
        #expect(answered.0.kind == .upstreamError)
        #expect(!answered.retryable)
        // A failed socket read stays a network failure; a broken chunk in it is the host's.
        #expect(TransferFailure.error(for: CURLE_RECV_ERROR, url: "http://h/x", detail: "Recv failure: Connection reset by peer",
                                      requestSent: true).0.kind == .networkUnavailable)
    }
}
