import HTTPServing
import NIOCore
import NIOHTTP1
import Testing
import TestSupport

/// `HTTPServer`'s upgrade hook over a real socket: an upgraded connection is the upgrader's
/// alone (the server's handler has left it), a declined upgrade is an ordinary request, and a
/// forced shutdown closes an upgraded connection.
@Suite("HTTP server: upgrade hook", .timeLimit(.minutes(2)))
struct HTTPUpgradeTests {
    private static func upgrade(_ path: String) -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n"
    }

    @Test("upgraded: the upgrader's handler alone reads the connection; declined: the request is answered")
    func upgradeAndDecline() async throws {
        let server = try await HTTPServer.start(.init(upgraders: [EchoUpgrader()]), responding: { request in
            HTTPServerResponse(status: .ok, body: ByteBuffer(string: "plain " + request.path))
        })
        try await withTimeout(seconds: 10) {
            try await RawConnection.with(port: server.port) { connection in
                try await connection.send(Self.upgrade("/up"))
                let switched = try #require(try await connection.response())
                #expect(switched.status == 101 && switched.headers["upgrade"] == "echo")
                // Bytes that would be a malformed request to HTTP come back as they were sent.
                try await connection.send("ping\r\n\r\n")
                #expect(try await connection.receivedSome() == Array("ping\r\n\r\n".utf8))
            }
            try await RawConnection.with(port: server.port) { connection in
                try await connection.send(Self.upgrade("/declined"))
                let answered = try #require(try await connection.response())
                #expect(answered.status == 200 && answered.body == Array("plain /declined".utf8))
            }
        }
        await server.shutdown()
    }

    @Test("a forced shutdown closes an upgraded connection")
    func forcedShutdown() async throws {
        let server = try await HTTPServer.start(.init(upgraders: [EchoUpgrader()]), group: nil) { _, writer in
            writer.respond(HTTPServerResponse())
        }
        try await withTimeout(seconds: 10) {
            try await RawConnection.with(port: server.port) { connection in
                try await connection.send(Self.upgrade("/up"))
                _ = try #require(try await connection.response())
                await server.shutdown(force: true)
                #expect(try await connection.untilClosed().isEmpty)
            }
        }
    }
}

/// A made-up protocol, `echo`, that sends back every byte: what any upgraded protocol needs
/// of the server is only that its own HTTP handling has left the connection. `/declined` is
/// refused, as a guard refuses a WebSocket.
private struct EchoUpgrader: HTTPServerProtocolUpgrader, Sendable {
    let supportedProtocol = "echo"
    let requiredUpgradeHeaders: [String] = []

    func buildUpgradeResponse(channel: any Channel, upgradeRequest: HTTPRequestHead,
                              initialResponseHeaders: HTTPHeaders) -> EventLoopFuture<HTTPHeaders> {
        guard upgradeRequest.uri != "/declined" else {
            return channel.eventLoop.makeFailedFuture(ChannelError.inappropriateOperationForState)
        }
        return channel.eventLoop.makeSucceededFuture(initialResponseHeaders)
    }

    func upgrade(context: ChannelHandlerContext, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<Void> {
        context.pipeline.addHandler(Echo())
    }

    private final class Echo: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.writeAndFlush(data, promise: nil)
        }
    }
}
