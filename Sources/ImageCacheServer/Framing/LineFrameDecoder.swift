import NIOCore

/// One unit the framing hands to the RPC layer: a complete line, or the news that a line
/// grew past the limit (after which the connection is answered -32600 and closed).
enum InboundFrame {
    case line(ByteBuffer)
    case tooLong
}

/// Splits the inbound byte stream into `\n`-terminated lines (NDJSON) without ever holding
/// more than `maxLineBytes` plus one read's worth of bytes.
///
/// A line longer than the limit is not buffered to its end: as soon as the pending bytes
/// exceed the limit the decoder reports `.tooLong` once and from then on discards everything,
/// so a client streaming an endless line cannot grow the daemon's memory. The scan resumes
/// where the previous one stopped, so a long line arriving in many small reads costs linear
/// time, not quadratic.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = InboundFrame

    /// Longest accepted line, newline excluded (`max_request_bytes`).
    let maxLineBytes: Int
    /// Bytes after the reader index already known to hold no newline.
    private var scanned = 0
    /// Set once a line was too long: every later byte is dropped unread.
    private var overflowed = false

    init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if overflowed {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        let view = buffer.readableBytesView
        let searchStart = view.index(view.startIndex, offsetBy: scanned)
        if let newline = view[searchStart...].firstIndex(of: UInt8(ascii: "\n")) {
            let length = view.distance(from: view.startIndex, to: newline)
            scanned = 0
            if length > maxLineBytes {
                overflow(context: context, buffer: &buffer)
                return .needMoreData
            }
            let line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            context.fireChannelRead(wrapInboundOut(.line(line)))
            return .continue
        }
        scanned = view.count
        if view.count > maxLineBytes {
            overflow(context: context, buffer: &buffer)
        }
        return .needMoreData
    }

    /// At end of input a final line without its `\n` is still a line: `printf '{…}' | nc -U`
    /// is a fair way to talk to the daemon.
    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if !overflowed, seenEOF, buffer.readableBytes > 0 {
            let line = buffer.readSlice(length: buffer.readableBytes)!
            scanned = 0
            context.fireChannelRead(wrapInboundOut(.line(line)))
        }
        buffer.moveReaderIndex(to: buffer.writerIndex)
        return .needMoreData
    }

    private mutating func overflow(context: ChannelHandlerContext, buffer: inout ByteBuffer) {
        overflowed = true
        buffer.moveReaderIndex(to: buffer.writerIndex)
        context.fireChannelRead(wrapInboundOut(.tooLong))
    }
}
