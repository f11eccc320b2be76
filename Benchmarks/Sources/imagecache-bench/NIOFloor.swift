import ArgumentParser
import Foundation
import ImageCacheKit
import NIOCore
import NIOPosix

/// The floor of an inline memory-hit answer *through SwiftNIO*: a minimal server on one event
/// loop that answers every request line with a `thumbnail.show`-shaped answer in the daemon's
/// wire format and does nothing else (no JSON parsing beyond finding the id, no cache, no
/// slots). Driven by the daemon's own generator (`show load --inline`), it tells how much of
/// an inline answer's cost is NIO's and the kernel's, and how much is the daemon's own code:
/// the daemon cannot be faster than this on the same machine. `show-floor.sh` runs it beside
/// the C floor (`show_floor.c`).
struct NIOFloor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nio-floor",
        abstract: "Serve thumbnail.show-shaped inline answers through NIO and nothing else (a floor).")

    enum Mode: String, ExpressibleByArgument {
        /// The head from a buffer, base64 and the line's end from a sealed memfd (the daemon's way).
        case file
        /// The whole line copied into one buffer and written at once.
        case buffer
    }

    @Option(help: "The Unix socket to listen on.")
    var socket: String
    @Option(help: "file: head + sealed memfd (the daemon's way); buffer: one buffer per answer.")
    var mode: Mode = .file
    @Option(help: "Base64 characters per answer (the daemon's 30 KB thumbnail: 40 960).")
    var bytes = 40_960

    func run() throws {
        let base64 = [UInt8](repeating: UInt8(ascii: "A"), count: bytes) + Array(#""}}"#.utf8) + [0x0A]
        guard let file = SealedMemoryFile.make(base64) else { throw ValidationError("memfd_create failed") }
        let answer = FloorAnswer(mode: mode, file: file, tail: base64)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        try? FileManager.default.removeItem(atPath: socket)
        let channel = try ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FloorLineDecoder()))
                    try channel.pipeline.syncOperations.addHandler(FloorHandler(answer: answer))
                }
            }
            .bind(unixDomainSocketPath: socket).wait()
        try channel.closeFuture.wait()
    }
}

/// What every answer carries after its id.
private struct FloorAnswer: Sendable {
    let mode: NIOFloor.Mode
    let file: SealedMemoryFile
    let tail: [UInt8]
    static let before = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
    static let after = Array(#","result":{"slot":0,"view":"main","photo":null,"path":"/var/cache/imagecached/data/ab/abcdef","width":244,"height":244,"bytes":30682,"mime":"image/jpeg","source":"memory","data":""#.utf8)
}

/// Newline framing, as the daemon's `LineFrameDecoder` does.
private struct FloorLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer
    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let end = buffer.readableBytesView.firstIndex(of: 0x0A) else { return .needMoreData }
        let line = buffer.readSlice(length: end - buffer.readerIndex + 1)!
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }
}

/// Finds the id after `"id":` and answers.
private final class FloorHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = IOData
    let answer: FloorAnswer
    init(answer: FloorAnswer) { self.answer = answer }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        // The id's digits after `"id":`, found with a plain byte loop (no generic algorithms).
        let id: Range<Int>? = line.withUnsafeReadableBytes { bytes in
            let key: [UInt8] = Array(#""id":"#.utf8)
            var index = 0
            while index + key.count <= bytes.count {
                if bytes[index] == key[0], bytes[index + 1] == key[1], bytes[index + 2] == key[2],
                   bytes[index + 3] == key[3], bytes[index + 4] == key[4] {
                    var end = index + key.count
                    while end < bytes.count, bytes[end] != UInt8(ascii: ","), bytes[end] != UInt8(ascii: "}") { end += 1 }
                    return (index + key.count)..<end
                }
                index += 1
            }
            return nil
        }
        guard let id else { return }
        var head = context.channel.allocator.buffer(capacity: 512 + (answer.mode == .buffer ? answer.tail.count : 0))
        head.writeBytes(FloorAnswer.before)
        var digits = line.getSlice(at: line.readerIndex + id.lowerBound, length: id.count)!
        head.writeBuffer(&digits)
        head.writeBytes(FloorAnswer.after)
        switch answer.mode {
        case .buffer:
            head.writeBytes(answer.tail)
            context.writeAndFlush(wrapOutboundOut(.byteBuffer(head)), promise: nil)
        case .file:
            context.write(wrapOutboundOut(.byteBuffer(head)), promise: nil)
            let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: answer.file.descriptor)
            let written = context.eventLoop.makePromise(of: Void.self)
            let file = answer.file
            written.futureResult.whenComplete { _ in
                _ = try? handle.takeDescriptorOwnership()
                withExtendedLifetime(file) {}
            }
            let region = FileRegion(fileHandle: handle, readerIndex: 0, endIndex: answer.file.count)
            context.writeAndFlush(wrapOutboundOut(.fileRegion(region)), promise: written)
        }
    }
}
