import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import ImageCacheKit
@testable import ImageCacheServer
import Logging
import NIOCore
import Testing
import TestSupport

/// The one place answers leave (`Answer`): an ok result, a failure mapped to the wire once, the
/// server's own refusals and an error nobody maps each reach a real socket with the request's
/// id and the contract's shape, and each is counted with its outcome.
@Suite("Answers leave through one place, with the request's id and the contract's shape", .timeLimit(.minutes(1)))
struct AnswerTests {
    enum Succeeds: NumberMethod { static let name: MethodName = "test.answer.ok" }

    enum Fails: NumberMethod { static let name: MethodName = "test.answer.fails" }

    enum Surprises: NumberMethod { static let name: MethodName = "test.answer.surprise" }

    enum Refuses: NumberMethod { static let name: MethodName = "test.answer.refused" }

    /// An error the wire mapping does not know: a bug, whose text must never leave.
    struct Surprise: Error {
        var secret = "s3cr3t-internal-state"
    }

    static func register(in router: inout RPCRouter) {
        router.register(Succeeds.self, .task { _, _ in 42 })
        router.register(Fails.self, .task { _, _ in throw SearchError.queryTooShort })
        router.register(Surprises.self, .task { _, _ in throw Surprise() })
        // Inline: its refusal is answered by the dispatcher on the event loop, with no task.
        router.register(Refuses.self, .inline { _, _ in throw ServerError(.prefetchQueueFull(queued: 2, cap: 2)) })
    }

    /// The next line from `client`, decoded as the contract's response object.
    static func response(_ client: RawClient) async throws -> RPCResponse {
        let line = try #require(try await client.readLine())
        return try JSONDecoder().decode(RPCResponse.self, from: Data(line))
    }

    @Test("an ok result leaves with the request's id, integer or string, and nothing else")
    func okAnswer() async throws {
        try await TestServer.with(extend: { Self.register(in: &$0) }) { server in
            let client = try await server.connect()
            try await client.send(#"{"jsonrpc":"2.0","id":7,"method":"test.answer.ok"}"#)
            #expect(try await Self.response(client) == RPCResponse(id: .int(7), result: .int(42)))
            try await client.send(#"{"jsonrpc":"2.0","id":"s-1","method":"test.answer.ok"}"#)
            #expect(try await Self.response(client) == RPCResponse(id: .string("s-1"), result: .int(42)))
            await client.close()
        }
    }

    @Test("a handler's engine error leaves mapped once: its kind, code and message, the request's id")
    func failureAnswer() async throws {
        try await TestServer.with(extend: { Self.register(in: &$0) }) { server in
            let client = try await server.connect()
            try await client.send(#"{"jsonrpc":"2.0","id":"f","method":"test.answer.fails"}"#)
            let answer = try await Self.response(client)
            #expect(answer == RPCResponse(id: .string("f"), error: RPCError(
                .queryTooShort, "the query must have at least 3 characters after trimming", field: "query")))
            #expect(answer.error?.code == ErrorKind.queryTooShort.code)
            await client.close()
        }
    }

    @Test("an error nobody maps is -32603 internal, its text withheld")
    func unknownError() async throws {
        try await TestServer.with(extend: { Self.register(in: &$0) }) { server in
            let client = try await server.connect()
            try await client.send(#"{"jsonrpc":"2.0","id":3,"method":"test.answer.surprise"}"#)
            let line = try #require(try await client.readLine())
            #expect(!String(decoding: line, as: UTF8.self).contains("s3cr3t"))
            let answer = try JSONDecoder().decode(RPCResponse.self, from: Data(line))
            #expect(answer == RPCResponse(id: .int(3), error: RPCError(.internal, "internal error")))
            #expect(answer.error?.code == -32603)
            await client.close()
        }
    }

    @Test("the server's own refusals read as the contract has them: unknown method, full queue, duplicate id")
    func refusals() async throws {
        let methods = TestMethods()
        try await TestServer.with(extend: { Self.register(in: &$0); methods.register(in: &$0) }) { server in
            let client = try await server.connect()
            try await client.send(#"{"jsonrpc":"2.0","id":1,"method":"no.such.method"}"#)
            #expect(try await Self.response(client)
                    == RPCResponse(id: .int(1), error: RPCError(.methodNotFound, "unknown method \"no.such.method\"")))
            try await client.send(#"{"jsonrpc":"2.0","id":2,"method":"test.answer.refused"}"#)
            #expect(try await Self.response(client) == RPCResponse(id: .int(2), error: RPCError(
                .busy, "too many queued prefetches on this connection (2 queued, max_pending_per_session = 2)")))
            // A request holding id 5, then another with the same id while it is pending.
            try await client.send(#"{"jsonrpc":"2.0","id":5,"method":"test.block","params":{"key":"d"}}"#)
            try await methods.wait(for: "started:d")
            try await client.send(#"{"jsonrpc":"2.0","id":5,"method":"test.answer.ok"}"#)
            #expect(try await Self.response(client) == RPCResponse(id: .int(5), error: RPCError(
                .invalidRequest, "a request with id 5 is already pending on this connection")))
            await client.close()
        }
    }

    @Test("a notification's failure is never answered: the next line is the next request's")
    func notificationFailure() async throws {
        try await TestServer.with(extend: { Self.register(in: &$0) }) { server in
            let client = try await server.connect()
            try await client.send(#"{"jsonrpc":"2.0","method":"test.answer.fails"}"#)
            try await client.send(#"{"jsonrpc":"2.0","method":"no.such.method"}"#)
            try await client.send(#"{"jsonrpc":"2.0","id":9,"method":"test.answer.ok"}"#)
            #expect(try await Self.response(client) == RPCResponse(id: .int(9), result: .int(42)))
            await client.close()
        }
    }

    /// A count as the observer saw it.
    struct Count: Sendable, Equatable {
        var method: String
        var outcome: String
    }

    @Test("each answer is counted once with its outcome: ok, the failure's kind, a refusal's kind under its label",
          arguments: [("test.answer.ok", "ok"), ("test.answer.fails", "query_too_short"),
                      ("test.answer.surprise", "internal"), ("test.answer.refused", "busy"),
                      ("no.such.method", "method_not_found")])
    func counted(method: String, outcome: String) async throws {
        let connection = try await LimitedConnection()
        var router = RPCRouter()
        Self.register(in: &router)
        let counts = LockedState<[Count]>([])
        let dispatcher = Dispatcher(router: router, limits: { ServerLimits() }, registry: SessionRegistry(),
                                    observer: { method in { outcome, _ in
            counts.withLock { $0.append(Count(method: method, outcome: outcome)) }
        } })
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let session = Session(id: 1, peer: nil, channel: connection.channel, logger: logger)
        let line = ByteBuffer(string: #"{"jsonrpc":"2.0","id":4,"method":"\#(method)"}"#)
        try await connection.channel.eventLoop.submit { dispatcher.handle(line: line, session: session) }.get()
        // The answer arrives from a task on the cooperative pool, so the blocking read waits on
        // a thread of its own: on the pool it would hold one of its two threads while the
        // other cases' reads hold the rest, and no answer could be made.
        let peer = connection.peer
        let answer = try await offCooperativePool { try Self.readLine(peer) }
        try await connection.loopTurn()
        let label = router.route(for: method) == nil ? Dispatcher.unroutedMethod : method
        #expect(counts.withLock { $0 } == [Count(method: label, outcome: outcome)])
        let response = try JSONDecoder().decode(RPCResponse.self, from: Data(answer))
        #expect(response.id == .int(4))
        #expect((response.error?.kind.rawValue ?? Answer.ok) == outcome)
        try await connection.shutdown()
    }

    /// One line from `fd`, read a byte at a time (the answer is the only thing sent), each
    /// wait for bytes bounded.
    static func readLine(_ fd: CInt) throws -> [UInt8] {
        var line: [UInt8] = []
        var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while line.last != UInt8(ascii: "\n") {
            guard poll(&ready, 1, 30_000) == 1 else { throw TimeoutError(seconds: 30) }
            var byte: UInt8 = 0
            guard read(fd, &byte, 1) == 1 else { break }
            line.append(byte)
        }
        return line
    }
}
