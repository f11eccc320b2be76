import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import ImageCacheServer
import Logging
import NIOCore
import NIOPosix
import Testing

/// How a slot's lines reach the connection: a memory hit decided on the event loop is written
/// at once, without a trip through the loop's task queue, yet never ahead of a line another
/// thread decided before it (docs/protocol.md, "thumbnail.show": no late results). A real event loop and a real
/// socket pair: the order is the one a client reads.
@Suite("Slot table: the order lines are written in", .timeLimit(.minutes(1)))
struct SlotTableSendingTests {
    /// A session on one end of a socket pair; the test reads the other end.
    private final class Fixture: Sendable {
        let connection: LimitedConnection
        let session: Session
        let table: SlotTable
        var channel: any Channel { connection.channel }
        var peer: CInt { connection.peer }

        init() async throws {
            connection = try await LimitedConnection()
            session = Session(id: 1, peer: nil, channel: connection.channel, logger: Logger(label: "test"))
            table = SlotTable(session: session)
        }

        func shutdown() async throws {
            try await connection.shutdown()
        }

        /// A `thumbnail.show` request admitted on the session, as the dispatcher does it.
        func request(_ id: Int) throws -> RequestContext {
            guard case .admitted(let serial, let key) = session.admit(id: .int(id), cap: nil) else {
                throw TestFailure("request \(id) was not admitted")
            }
            return RequestContext(session: session, requestID: .int(id), method: "thumbnail.show",
                                  pending: Session.PendingEntry(key: key, serial: serial))
        }

        /// The lines the peer can read now, without waiting.
        func readable() -> [String] {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                guard count > 0 else { break }
                bytes += chunk[..<count]
            }
            return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        }

        /// The next `count` lines, waiting for them (the test's time limit bounds the wait).
        func lines(_ count: Int) -> [String] {
            var lines: [String] = []
            while lines.count < count {
                var ready = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
                _ = poll(&ready, 1, 1000)
                lines += readable()
            }
            return lines
        }
    }

    private struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    private static func line(_ text: String) -> OutboundMessage {
        OutboundMessage(bytes: ByteBuffer(string: text + "\n"), priority: .response)
    }

    /// Runs `body` with a fixture that is shut down afterwards, whatever `body` does.
    private static func withFixture(_ body: (Fixture) async throws -> Void) async throws {
        let fixture = try await Fixture()
        do {
            try await body(fixture)
        } catch {
            try? await fixture.shutdown()
            throw error
        }
        try await fixture.shutdown()
    }

    @Test("an answer decided on the event loop with nothing queued is in the socket before the loop runs another task")
    func writtenAtOnceOnTheLoop() async throws {
        try await Self.withFixture { fixture in
            let context = try fixture.request(1)
            let table = fixture.table
            // Checked outside the loop's task: an expectation recorded on a NIO thread is not
            // attributed to this test.
            let (current, seen) = try await fixture.channel.eventLoop.submit {
                let ticket = table.show(SlotKey(view: "grid", slot: 0), context: context)
                let current = table.finish(ticket, success: { _ in Self.line("hit") })
                // Still inside this task: a line queued with `execute` could not be written yet.
                return (current, fixture.readable())
            }.get()
            #expect(current)
            #expect(seen == ["hit"])
        }
    }

    @Test("a line decided on the loop waits behind one another thread queued before it")
    func neverOvertakesAQueuedLine() async throws {
        try await Self.withFixture { fixture in
            let first = try fixture.request(1)
            let second = try fixture.request(2)
            let table = fixture.table
            let key = SlotKey(view: "grid", slot: 0)
            let firstTicket = table.show(key, context: first)
            let current = try await fixture.channel.eventLoop.submit {
                // Another thread (a loading task) sends progress for the slot's first photo; the
                // loop is busy with this task, so that line waits in the loop's queue.
                let queued = DispatchSemaphore(value: 0)
                Thread {
                    table.notify(Self.line("progress of 1"), for: firstTicket)
                    queued.signal()
                }.start()
                queued.wait()
                // Then, on the loop, the slot is shown again and the new photo is a memory hit.
                let ticket = table.show(key, context: second)
                return table.finish(ticket, .success { _ in Self.line("hit 2") })
            }.get()
            #expect(current)
            let lines = fixture.lines(3)
            #expect(lines.count == 3)
            #expect(lines.first == "progress of 1")
            #expect(lines.dropFirst().first?.contains("recycled") == true)
            #expect(lines.last == "hit 2")
        }
    }

    @Test("a recycled slot stops its request's own task, whether the task was attached before or after")
    func recycleStopsTheRequestsTask() async throws {
        try await Self.withFixture { fixture in
            let table = fixture.table
            let key = SlotKey(view: "grid", slot: 0)
            // Attached first, as the dispatcher does it, then the slot is recycled.
            let early = try fixture.request(1)
            _ = table.show(key, context: early)
            let earlyTask = Task<Void, Never> { while !Task.isCancelled { await Task.yield() } }
            fixture.session.attach(earlyTask, key: try #require(early.pending?.key), serial: try #require(early.pending?.serial))
            #expect(!earlyTask.isCancelled)
            table.recycle(key, context: try fixture.request(2))
            #expect(earlyTask.isCancelled)
            await earlyTask.value
            // Recycled before its task is attached: the task is cancelled as it arrives.
            let late = try fixture.request(3)
            _ = table.show(key, context: late)
            _ = table.show(key, context: try fixture.request(4))
            let lateTask = Task<Void, Never> { while !Task.isCancelled { await Task.yield() } }
            fixture.session.attach(lateTask, key: try #require(late.pending?.key), serial: try #require(late.pending?.serial))
            #expect(lateTask.isCancelled)
            await lateTask.value
        }
    }
}
