import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import ImageCacheServer
import ImageCacheKit
import Logging
import NIOCore
import Testing
import TestSupport

/// The metrics observer's one rule: a request is counted when its answer is claimed, before that
/// answer is written, whoever writes it (the dispatcher, an arrival step, the slot table). At
/// the moment of the count the peer must have nothing to read; right after, it has the answer.
@Suite("Requests are counted before their answer is written", .timeLimit(.minutes(1)))
struct RequestCountingTests {
    enum Inline: NumberMethod { static let name: MethodName = "test.inline" }

    enum Arrived: NumberMethod { static let name: MethodName = "test.arrived" }

    enum Tasked: NumberMethod { static let name: MethodName = "test.task" }

    /// A count as the observer saw it, with how many bytes the peer could read at that moment.
    struct Count: Sendable {
        var method: String
        var outcome: String
        var readableAtCount: Int
    }

    static var router: RPCRouter {
        var router = RPCRouter()
        router.register(Inline.self, .inline { _, _ in .result(1) })
        // Answers the request itself in its arrival step, as a memory hit does through the slot table.
        router.register(Arrived.self, .ordered(arrival: { _, context -> Arrival<Int> in
            let answer = Answer.result(2, context: context)
            if context.claimAnswer(outcome: answer.outcome), let id = context.requestID {
                context.session.send(answer.line(id))
            }
            return .sent
        }, run: { _, _ in .sent }))
        router.register(Tasked.self, .task { _, _ in 3 })
        return router
    }

    /// Bytes waiting on `fd`, without taking them.
    static func readable(_ fd: CInt) -> Int {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        return max(0, count)
    }

    @Test("inline, arrival-step and task answers are each counted once, before they are written",
          arguments: ["test.inline", "test.arrived", "test.task"])
    func countedBeforeWritten(method: String) async throws {
        let connection = try await LimitedConnection()
        let peer = connection.peer
        let counts = LockedState<[Count]>([])
        let dispatcher = Dispatcher(router: Self.router, limits: { ServerLimits() }, registry: SessionRegistry(),
                                    observer: { method in { outcome, _ in
            counts.withLock { $0.append(Count(method: method, outcome: outcome, readableAtCount: Self.readable(peer))) }
        } })
        let session = Session(id: 1, peer: nil, channel: connection.channel, logger: Logger(label: "test"))
        let line = ByteBuffer(string: #"{"jsonrpc":"2.0","id":7,"method":"\#(method)"}"#)
        try await connection.channel.eventLoop.submit { dispatcher.handle(line: line, session: session) }.get()
        // The answer arrives from a task on the cooperative pool, so the wait for it blocks a
        // thread of its own, bounded: on the pool, the cases waiting at once would hold every
        // one of its threads and no answer could be made.
        let arrived = try await offCooperativePool { () -> Bool in
            var ready = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
            return poll(&ready, 1, 30_000) == 1
        }
        #expect(arrived, "the answer within 30 s")
        try await connection.loopTurn()
        let seen = counts.withLock { $0 }
        #expect(seen.count == 1)
        #expect(seen.first?.method == method)
        #expect(seen.first?.outcome == "ok")
        #expect(seen.first?.readableAtCount == 0, "counted after its answer was written")
        try await connection.shutdown()
    }
}
