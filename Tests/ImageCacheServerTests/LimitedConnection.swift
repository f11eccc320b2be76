import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import ImageCacheServer
import Logging
import NIOCore
import NIOPosix

/// The writing side of a connection as the server sets it up: a channel with the slow-reader
/// policy (`OutboundLimiter`) on one end of a real socket pair, on an event loop of its own.
/// The test reads the other end, `peer`, or never reads it.
final class LimitedConnection: Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channel: any Channel
    let peer: CInt

    init(limits: ServerLimits = ServerLimits()) async throws {
        var fds: [CInt] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else {
            throw IOError(errnoCode: errno, reason: "socketpair")
        }
        peer = fds[1]
        let metrics = ServerMetrics()
        channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(OutboundLimiter(
                        limits: limits, metrics: metrics, logger: Logger(label: "test")))
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
