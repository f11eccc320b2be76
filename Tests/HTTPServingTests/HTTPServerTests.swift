import Foundation
@testable import HTTPServing
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
import TestSupport

/// `HTTPServer` over real sockets on 127.0.0.1: the port the kernel picks, a bind that fails,
/// the body limit, keep-alive, an abandoned response, and shutdown with connections open.
@Suite("HTTP server", .timeLimit(.minutes(2)))
struct HTTPServerTests {
    private static func get(_ path: String, _ extra: String = "") -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(extra)\r\n"
    }

    /// A server that answers every request with its path and body size.
    private static func echo(_ configuration: HTTPServer.Configuration = .init(), group: (any EventLoopGroup)? = nil)
        async throws(HTTPBindError) -> HTTPServer {
        try await HTTPServer.start(configuration, group: group, responding: { request in
            HTTPServerResponse(status: .ok, headers: ["X-Body": String(request.body.readableBytes)],
                               body: ByteBuffer(string: String(request.path)))
        })
    }

    @Test("port 0: the kernel's port is reported, and a request on it is answered")
    func portZero() async throws {
        let server = try await Self.echo()
        #expect(server.port > 0)
        #expect(server.boundAddress == .tcp(host: "127.0.0.1", port: server.port))
        let response = try await withTimeout(seconds: 10) {
            try await RawConnection.with(port: server.port) { connection in
                try await connection.send(Self.get("/a?b=1"))
                return try #require(try await connection.response())
            }
        }
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "/a")
        #expect(response.headers["content-length"] == "2")
        await server.shutdown()
    }

    @Test("an address that cannot be bound: the error names it and the reason")
    func bindError() async throws {
        let first = try await Self.echo()
        let taken = HTTPListenAddress.tcp(host: "127.0.0.1", port: first.port)
        do {
            let second = try await Self.echo(.init(address: taken))
            await second.shutdown()
            Issue.record("a second server bound \(taken)")
        } catch {
            #expect(error.address == taken)
            #expect(error.reason == "cannot bind 127.0.0.1:\(first.port): Address already in use", "\(error.reason)")
        }
        await first.shutdown()

        let nowhere = HTTPListenAddress.unix(path: "/nonexistent-\(UUID().uuidString)/http.sock")
        do {
            let unexpected = try await Self.echo(.init(address: nowhere))
            await unexpected.shutdown()
            Issue.record("bound \(nowhere)")
        } catch {
            #expect(error.reason.hasPrefix("cannot bind \(nowhere): "), "\(error.reason)")
        }
    }

    @Test("a Unix socket: served, and its file removed on shutdown")
    func unixSocket() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("http-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/s.sock"
        let server = try await Self.echo(.init(address: .unix(path: path)))
        #expect(server.boundAddress == .unix(path: path))
        #expect(FileManager.default.fileExists(atPath: path))
        await server.shutdown()
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("a body over the limit is refused with 413 and the connection closed, unread; one at the limit is served")
    func bodyLimit() async throws {
        let handled = Counter()
        let server = try await HTTPServer.start(.init(maxBodyBytes: 16), responding: { request in
            handled.add()
            return HTTPServerResponse(status: .ok, headers: ["X-Body": String(request.body.readableBytes)])
        })
        let post = "POST /p HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        try await withTimeout(seconds: 10) {
            // Declared too long: refused from the head, before any of the body is sent.
            try await RawConnection.with(port: server.port) { connection in
                try await connection.send(post + "Content-Length: 17\r\n\r\n")
                let refused = try #require(try await connection.response())
                #expect(refused.status == 413)
                #expect(refused.headers["connection"] == "close")
                #expect(try await connection.untilClosed().isEmpty)
            }
            // Chunked, growing past the limit: refused when the piece that crosses it arrives.
            try await RawConnection.with(port: server.port) { connection in
                try await connection.send(post + "Transfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\na\r\n0123456789\r\n")
                let refused = try #require(try await connection.response())
                #expect(refused.status == 413)
                #expect(try await connection.untilClosed().isEmpty)
            }
            // Exactly the limit: served.
            try await RawConnection.with(port: server.port) { connection in
                try await connection.send(post + "Content-Length: 16\r\n\r\n0123456789abcdef")
                let served = try #require(try await connection.response())
                #expect(served.status == 200 && served.headers["x-body"] == "16")
            }
        }
        #expect(handled.value == 1)
        await server.shutdown()
    }

    @Test("keep-alive: two requests answered on one connection; without it, one answer then a close")
    func keepAlive() async throws {
        let server = try await Self.echo()
        try await withTimeout(seconds: 10) {
            try await RawConnection.with(port: server.port) { connection in
                try await connection.send(Self.get("/one"))
                let first = try #require(try await connection.response())
                try await connection.send(Self.get("/two"))
                let second = try #require(try await connection.response())
                #expect(String(decoding: first.body, as: UTF8.self) == "/one")
                #expect(String(decoding: second.body, as: UTF8.self) == "/two")
                #expect(first.headers["connection"] == nil && second.headers["connection"] == nil)
                // Pipelined: both sent before either answer, answered in order.
                try await connection.send(Self.get("/three") + Self.get("/four", "Connection: close\r\n"))
                let third = try #require(try await connection.response())
                let fourth = try #require(try await connection.response())
                #expect(String(decoding: third.body, as: UTF8.self) == "/three")
                #expect(String(decoding: fourth.body, as: UTF8.self) == "/four" && fourth.headers["connection"] == "close")
                #expect(try await connection.untilClosed().isEmpty)
            }
        }
        await server.shutdown()

        let single = try await Self.echo(.init(keepAlive: false))
        try await withTimeout(seconds: 10) {
            try await RawConnection.with(port: single.port) { connection in
                try await connection.send(Self.get("/one") + Self.get("/two"))
                let first = try #require(try await connection.response())
                #expect(first.headers["connection"] == "close")
                #expect(try await connection.untilClosed().isEmpty, "the pipelined second request is not answered")
            }
        }
        await single.shutdown()
    }

    @Test("HEAD: the length of the body, not the body")
    func head() async throws {
        let server = try await Self.echo()
        let response = try await withTimeout(seconds: 10) {
            try await RawConnection.with(port: server.port) { connection in
                try await connection.send("HEAD /abc HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                let head = try #require(try await connection.response(toHEAD: true))
                return (head, try await connection.untilClosed())
            }
        }
        #expect(response.0.status == 200 && response.0.headers["content-length"] == "4")
        #expect(response.0.body.isEmpty && response.1.isEmpty)
        await server.shutdown()
    }

    @Test("an async handler answers off the event loop")
    func asyncHandler() async throws {
        let server = try await HTTPServer.start(.init(), respondingAsync: { request in
            await Task.yield()
            return HTTPServerResponse(status: .accepted, body: ByteBuffer(string: String(request.path)))
        })
        let response = try await withTimeout(seconds: 10) {
            try await RawConnection.with(port: server.port) { try await $0.send(Self.get("/x")); return try await $0.response() }
        }
        #expect(response?.status == 202 && response?.body == Array("/x".utf8))
        await server.shutdown()
    }

    @Test("a client that leaves mid-body: the handler is told, with the bytes written")
    func abandoned() async throws {
        let (abandonments, told) = AsyncStream.makeStream(of: (String, Int).self)
        let server = try await HTTPServer.start(.init(), onAbandoned: { request, written in
            told.yield((String(request.path), written))
        }) { _, writer in
            writer.writeHead(status: .ok, headers: ["Content-Length": "100"])
            writer.write(ByteBuffer(string: "0123456789"))
        }
        let seen = try await withTimeout(seconds: 10) {
            try await RawConnection.with(port: server.port) { connection in
                try await connection.send(Self.get("/left"))
                _ = try await connection.receivedSome()
            }
            var iterator = abandonments.makeAsyncIterator()
            return await iterator.next()
        }
        #expect(seen?.0 == "/left" && seen?.1 == 10)
        await server.shutdown()
    }

    @Test("shutdown of a server with its own loops closes an idle connection and an endless response")
    func shutdownOwnLoops() async throws {
        let (started, begun) = AsyncStream.makeStream(of: Void.self)
        let server = try await HTTPServer.start(.init()) { request, writer in
            guard request.path == "/endless" else {
                writer.respond(HTTPServerResponse(status: .ok))
                return
            }
            writer.writeHead(status: .ok, headers: [:])   // chunked, never ended
            writer.write(ByteBuffer(string: "x"))
            begun.yield()
        }
        try await withTimeout(seconds: 20) {
            try await RawConnection.with(port: server.port) { idle in
                try await idle.send(Self.get("/"))
                _ = try #require(try await idle.response())
                try await RawConnection.with(port: server.port) { streaming in
                    try await streaming.send(Self.get("/endless"))
                    var iterator = started.makeAsyncIterator()
                    await iterator.next()
                    await server.shutdown()
                    #expect(try await idle.untilClosed().isEmpty)
                    _ = try await streaming.untilClosed()   // returns: the server closed it
                }
            }
        }
    }

    @Test("shutdown on shared loops: an idle connection closes now, one mid-response once its response ends")
    func shutdownSharedLoops() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (writers, handOver) = AsyncStream.makeStream(of: HTTPResponseWriter.self)
        let server = try await HTTPServer.start(.init(), group: group) { request, writer in
            if request.path == "/held" { handOver.yield(writer) } else { writer.respond(HTTPServerResponse(status: .ok)) }
        }
        try await withTimeout(seconds: 20) {
            try await RawConnection.with(port: server.port) { idle in
                try await idle.send(Self.get("/"))
                _ = try #require(try await idle.response())
                try await RawConnection.with(port: server.port) { busy in
                    try await busy.send(Self.get("/held"))
                    var iterator = writers.makeAsyncIterator()
                    let writer = try #require(await iterator.next())
                    await server.shutdown()
                    #expect(try await idle.untilClosed().isEmpty)
                    #expect(writer.isOpen, "a response in progress is not cut")
                    writer.respond(HTTPServerResponse(status: .ok, body: ByteBuffer(string: "done")))
                    let finished = try #require(try await busy.response())
                    #expect(finished.body == Array("done".utf8))
                    #expect(try await busy.untilClosed().isEmpty)
                }
            }
        }
        try await group.shutdownGracefully()
    }
}

/// A count read after the server's loop wrote it.
private final class Counter: Sendable {
    private let count = NIOLockedValueBox(0)
    func add() { count.withLockedValue { $0 += 1 } }
    var value: Int { count.withLockedValue { $0 } }
}
