import NIOCore

/// Splits the daemon's byte stream into lines, one JSON message each (the contract's NDJSON).
///
/// A bound on the line length keeps a runaway peer from growing the client's memory without
/// limit; past it the connection is closed and every pending call fails.
/// Public so that other relays of the daemon's lines (the web gallery's bridge) frame them the
/// same way rather than with a second copy.
public struct LineFrameDecoder: ByteToMessageDecoder {
    /// One line, without its newline.
    public typealias InboundOut = ByteBuffer

    /// Thrown when a line exceeds `maxLineBytes` before its newline arrives.
    public struct LineTooLong: Error, CustomStringConvertible {
        /// The bound that was passed.
        public let limit: Int
        public var description: String { "a message from the daemon exceeded \(limit) bytes" }
    }

    /// The longest line accepted.
    public let maxLineBytes: Int

    /// A decoder that refuses lines longer than `maxLineBytes`.
    public init(maxLineBytes: Int) { self.maxLineBytes = maxLineBytes }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > maxLineBytes { throw LineTooLong(limit: maxLineBytes) }
            return .needMoreData
        }
        let length = newline - buffer.readerIndex
        if length > maxLineBytes { throw LineTooLong(limit: maxLineBytes) }
        let line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A last message without its newline is still a whole message: read it.
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0 {
            let line = buffer.readSlice(length: buffer.readableBytes)!
            context.fireChannelRead(wrapInboundOut(line))
        }
        return .needMoreData
    }
}
