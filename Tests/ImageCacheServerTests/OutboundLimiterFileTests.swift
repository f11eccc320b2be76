import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import ImageCacheKit
@testable import ImageCacheServer
import Logging
import NIOCore
import NIOPosix
import Testing

/// A line whose end is a sealed file (a hot inline thumbnail) on the paths where it is not
/// written: the connection is closed, or its client stopped reading and the line would pass
/// the hard bound. The write fails, the connection stays consistent, and the file's
/// descriptor is closed exactly once, by the file, when its last holder lets it go (NIO's
/// handle on it never closes it). A real event loop and a real socket pair.
@Suite("Outbound limiter: lines that end in a sealed file", .timeLimit(.minutes(1)))
struct OutboundLimiterFileTests {
    /// A sealed file made through system calls that record each close, against its own count.
    private final class RecordedFile: Sendable {
        let closed = LockedState<[CInt]>([])
        let live = LockedState(0)

        func make(_ bytes: [UInt8]) throws -> SealedMemoryFile {
            let linux = SealedMemoryFile.SystemCalls.linux
            var calls = linux
            let closed = closed
            calls.close = { descriptor in
                closed.withLock { $0.append(descriptor) }
                linux.close(descriptor)
            }
            return try #require(SealedMemoryFile.make(bytes, budget: 1, live: live, calls: calls))
        }

        /// Lets the test's reference go once the connection's loop is done with the file, and
        /// checks that the file then closed its descriptor, once, and left the budget.
        func expectClosedOnce(releasing file: inout SealedMemoryFile?, on connection: LimitedConnection) async throws {
            let descriptor = try #require(file?.descriptor)
            #expect(closed.withLock { $0 }.isEmpty)
            try await connection.loopTurn()
            file = nil
            #expect(live.withLock { $0 } == 0)
            #expect(closed.withLock { $0 } == [descriptor])
        }
    }

    private static func message(_ file: SealedMemoryFile) -> OutboundMessage {
        OutboundMessage(bytes: ByteBuffer(string: #"{"jsonrpc":"2.0","id":1,"result":{"data":""#), priority: .response, rest: file)
    }

    @Test("on a closed connection the write fails and the file is closed once, when let go")
    func closedConnection() async throws {
        let connection = try await LimitedConnection()
        let recorded = RecordedFile()
        var file: SealedMemoryFile? = try recorded.make(Array(repeating: UInt8(ascii: "A"), count: 40_960))
        try await connection.channel.close()
        await #expect(throws: ChannelError.self) { try await connection.channel.writeAndFlush(Self.message(file!)) }
        #expect(file?.contents().count == 40_960)
        try await recorded.expectClosedOnce(releasing: &file, on: connection)
        try await connection.shutdown()
    }

    @Test("past the hard bound the connection closes, the write fails and the file is closed once, when let go")
    func pastTheHardBound() async throws {
        let connection = try await LimitedConnection(limits: ServerLimits(outboundSoftLimit: 64 << 10, outboundHardLimit: 128 << 10))
        let recorded = RecordedFile()
        // A line far larger than the socket's buffers: most of it stays queued, unread.
        let large = OutboundMessage(bytes: ByteBuffer(repeating: UInt8(ascii: "x"), count: 4 << 20), priority: .response)
        let first = connection.channel.eventLoop.makePromise(of: Void.self)
        connection.channel.writeAndFlush(large, promise: first)
        var file: SealedMemoryFile? = try recorded.make(Array(repeating: UInt8(ascii: "A"), count: 40_960))
        await #expect(throws: ChannelError.self) { try await connection.channel.writeAndFlush(Self.message(file!)) }
        // The limiter closed the connection: the large line fails too, and nothing more goes out.
        await #expect(throws: (any Error).self) { try await first.futureResult.get() }
        try await connection.channel.closeFuture.get()
        try await recorded.expectClosedOnce(releasing: &file, on: connection)
        try await connection.shutdown()
    }

    @Test("a written file is closed once, when let go, after the client read it whole")
    func written() async throws {
        let connection = try await LimitedConnection()
        let recorded = RecordedFile()
        var file: SealedMemoryFile? = try recorded.make(Array(repeating: UInt8(ascii: "A"), count: 40_960) + Array(#""}}"#.utf8) + [0x0A])
        let write = connection.channel.eventLoop.makePromise(of: Void.self)
        connection.channel.writeAndFlush(Self.message(file!), promise: write)
        // Read the whole line on the peer (off the event loop), then the write completes.
        let expected = Self.message(file!).size
        let read = await Task.detached { () -> Int in
            var total = 0
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while total < expected {
                let count = chunk.withUnsafeMutableBytes { recv(connection.peer, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                total += count
            }
            return total
        }.value
        #expect(read == expected)
        try await write.futureResult.get()
        try await recorded.expectClosedOnce(releasing: &file, on: connection)
        try await connection.shutdown()
    }

    @Test("a line that sends part of a file and then its own end: the client reads exactly head, that part and the end")
    func partOfTheFileThenTail() async throws {
        let connection = try await LimitedConnection()
        let recorded = RecordedFile()
        let data = (0..<40_000).map { UInt8(ascii: "A") + UInt8($0 % 26) }
        let foreignEnd = Array(#"","other":1}}"#.utf8) + [0x0A]
        var file: SealedMemoryFile? = try recorded.make(data + foreignEnd)
        let head = #"{"jsonrpc":"2.0","id":1,"result":{"data":""#
        let end = Array(#""}}"#.utf8) + [0x0A]
        let expected = Array(head.utf8) + data + end
        let write = connection.channel.eventLoop.makePromise(of: Void.self)
        do {
            // The message is let go once handed over: only the connection then holds the file.
            let message = OutboundMessage(bytes: ByteBuffer(string: head), priority: .response, rest: file!,
                                          restCount: data.count, tail: ByteBuffer(bytes: end))
            #expect(message.size == expected.count)
            connection.channel.writeAndFlush(message, promise: write)
        }
        let read = await Task.detached { () -> [UInt8] in
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while received.count < expected.count {
                let count = chunk.withUnsafeMutableBytes { recv(connection.peer, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                received += chunk.prefix(count)
            }
            return received
        }.value
        #expect(read == expected)
        try await write.futureResult.get()
        try await recorded.expectClosedOnce(releasing: &file, on: connection)
        try await connection.shutdown()
    }
}
