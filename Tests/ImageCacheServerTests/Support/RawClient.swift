import Foundation
import NIOCore
import NIOPosix
import TestSupport

/// A deliberately dumb client for the daemon's socket: it writes whatever bytes a test gives
/// it and reads back raw lines, so tests can send what no well-behaved client would.
final class RawClient: Sendable {
    let channel: any Channel
    private let lines: IteratorBox

    /// Connects to `path`. With `reading: false` the client never reads: its kernel buffer
    /// fills and the server sees a client that stopped reading.
    static func connect(_ path: String, reading: Bool = true) async throws -> RawClient {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.autoRead, value: reading)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(LineCollector(continuation: continuation))
                }
            }
            .connect(unixDomainSocketPath: path).get()
        return RawClient(channel: channel, lines: IteratorBox(stream.makeAsyncIterator()))
    }

    /// Wraps a stream socket already connected (one end of a socket pair whose other end a
    /// child process relays to the daemon as another user: `PeerAccounts.connect`).
    static func adopt(descriptor: Int32) async throws -> RawClient {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(LineCollector(continuation: continuation))
                }
            }
            .withConnectedSocket(descriptor).get()
        return RawClient(channel: channel, lines: IteratorBox(stream.makeAsyncIterator()))
    }

    private init(channel: any Channel, lines: IteratorBox) {
        self.channel = channel
        self.lines = lines
    }

    /// Sends raw bytes as they are (no newline added).
    func send(bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    /// Sends one line (a newline is appended).
    func send(_ line: String) async throws {
        try await send(bytes: Array((line + "\n").utf8))
    }

    /// The next line from the server, or nil once it closed the connection.
    func readLine(timeout: Double = 30) async throws -> [UInt8]? {
        let lines = self.lines
        return try await withTimeout(seconds: timeout) { await lines.next() }
    }

    /// The next line decoded as a JSON object; fails the test when it is not one.
    func readMessage(timeout: Double = 30) async throws -> [String: Any] {
        guard let line = try await readLine(timeout: timeout) else { throw ClientError.closed }
        guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
            throw ClientError.notAnObject(String(decoding: line, as: UTF8.self))
        }
        return object
    }

    /// Sends a request and returns the next message (for tests with one request in flight).
    func call(_ line: String) async throws -> [String: Any] {
        try await send(line)
        return try await readMessage()
    }

    /// Shuts the writing side: the server sees end of input.
    func shutdownOutput() async throws {
        try await channel.close(mode: .output)
    }

    func close() async {
        try? await channel.close()
    }

    enum ClientError: Error {
        case closed
        case notAnObject(String)
    }
}

/// Holds an AsyncStream iterator across the `@Sendable` boundary of `withTimeout`; only one
/// reader uses a client at a time.
private final class IteratorBox: @unchecked Sendable {
    // Unguarded on purpose: each test reads a client from one task at a time, in sequence.
    var iterator: AsyncStream<[UInt8]>.AsyncIterator
    init(_ iterator: AsyncStream<[UInt8]>.AsyncIterator) { self.iterator = iterator }
    func next() async -> [UInt8]? { await iterator.next() }
}

/// Splits what the server sends into lines and hands them to the test.
private final class LineCollector: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let continuation: AsyncStream<[UInt8]>.Continuation
    var pending: [UInt8] = []

    init(continuation: AsyncStream<[UInt8]>.Continuation) {
        self.continuation = continuation
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        pending += buffer.readBytes(length: buffer.readableBytes) ?? []
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            continuation.yield(Array(pending[..<newline]))
            pending.removeSubrange(...newline)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            continuation.finish()
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        continuation.finish()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        continuation.finish()
        context.close(promise: nil)
    }
}
