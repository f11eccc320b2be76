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
    /// A connection on one end of a socket pair whose other end is never read.
    private final class Fixture: Sendable {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel: any Channel
        let peer: CInt

        init(limits: ServerLimits) async throws {
            var fds: [CInt] = [0, 0]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            peer = fds[1]
            channel = try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(OutboundLimiter(
                            limits: limits, metrics: ServerMetrics(), logger: Logger(label: "test")))
                    }
                }
                .withConnectedSocket(fds[0]).get()
        }

        /// Returns once the event loop has finished what it was doing (callbacks of a completed
        /// write included, and the release of what they held).
        func loopTurn() async throws {
            try await channel.eventLoop.submit {}.get()
        }

        func shutdown() async throws {
            try? await channel.close()
            close(peer)
            try await group.shutdownGracefully()
        }
    }

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
    }

    private static func message(_ file: SealedMemoryFile) -> OutboundMessage {
        OutboundMessage(bytes: ByteBuffer(string: #"{"jsonrpc":"2.0","id":1,"result":{"data":""#), priority: .response, rest: file)
    }

    @Test("on a closed connection the write fails and the file is closed once, when let go")
    func closedConnection() async throws {
        let fixture = try await Fixture(limits: ServerLimits())
        let recorded = RecordedFile()
        var file: SealedMemoryFile? = try recorded.make(Array(repeating: UInt8(ascii: "A"), count: 40_960))
        let descriptor = file!.descriptor
        try await fixture.channel.close()
        await #expect(throws: ChannelError.self) { try await fixture.channel.writeAndFlush(Self.message(file!)) }
        #expect(file?.contents().count == 40_960)
        #expect(recorded.closed.withLock { $0 }.isEmpty)
        try await fixture.loopTurn()
        file = nil
        #expect(recorded.live.withLock { $0 } == 0)
        #expect(recorded.closed.withLock { $0 } == [descriptor])
        try await fixture.shutdown()
    }

    @Test("past the hard bound the connection closes, the write fails and the file is closed once, when let go")
    func pastTheHardBound() async throws {
        let fixture = try await Fixture(limits: ServerLimits(outboundSoftLimit: 64 << 10, outboundHardLimit: 128 << 10))
        let recorded = RecordedFile()
        // A line far larger than the socket's buffers: most of it stays queued, unread.
        let large = OutboundMessage(bytes: ByteBuffer(repeating: UInt8(ascii: "x"), count: 4 << 20), priority: .response)
        let first = fixture.channel.eventLoop.makePromise(of: Void.self)
        fixture.channel.writeAndFlush(large, promise: first)
        var file: SealedMemoryFile? = try recorded.make(Array(repeating: UInt8(ascii: "A"), count: 40_960))
        let descriptor = file!.descriptor
        await #expect(throws: ChannelError.self) { try await fixture.channel.writeAndFlush(Self.message(file!)) }
        // The limiter closed the connection: the large line fails too, and nothing more goes out.
        await #expect(throws: (any Error).self) { try await first.futureResult.get() }
        try await fixture.channel.closeFuture.get()
        try await fixture.loopTurn()
        file = nil
        #expect(recorded.live.withLock { $0 } == 0)
        #expect(recorded.closed.withLock { $0 } == [descriptor])
        try await fixture.shutdown()
    }

    @Test("a written file is closed once, when let go, after the client read it whole")
    func written() async throws {
        let fixture = try await Fixture(limits: ServerLimits())
        let recorded = RecordedFile()
        var file: SealedMemoryFile? = try recorded.make(Array(repeating: UInt8(ascii: "A"), count: 40_960) + Array(#""}}"#.utf8) + [0x0A])
        let descriptor = file!.descriptor
        let write = fixture.channel.eventLoop.makePromise(of: Void.self)
        fixture.channel.writeAndFlush(Self.message(file!), promise: write)
        // Read the whole line on the peer (off the event loop), then the write completes.
        let expected = Self.message(file!).size
        let read = await Task.detached { () -> Int in
            var total = 0
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while total < expected {
                let count = chunk.withUnsafeMutableBytes { recv(fixture.peer, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                total += count
            }
            return total
        }.value
        #expect(read == expected)
        try await write.futureResult.get()
        #expect(recorded.closed.withLock { $0 }.isEmpty)
        try await fixture.loopTurn()
        file = nil
        #expect(recorded.closed.withLock { $0 } == [descriptor])
        try await fixture.shutdown()
    }
}
