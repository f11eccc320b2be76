import NIOCore

/// Splits an inbound byte stream into `\n`-terminated lines (NDJSON: one JSON message a line),
/// without ever holding more than `maxLineBytes` plus one read's worth of bytes.
///
/// One decoder for both ends of the daemon's socket, so that the two cannot drift apart: the
/// daemon reads requests with it, the client and the web gallery's relay read answers. What
/// happens to a line longer than the bound is the one thing the two ends need differently,
/// so it is a parameter (`OverlongLine`), not a second copy.
///
/// The scan resumes where the previous one stopped, so a long line arriving in many small
/// reads costs linear time, not quadratic. A `\r` before the `\n` is kept in the line (JSON
/// reads it as white space). At end of input a final line without its `\n` is still a line:
/// `printf '{…}' | nc -U` is a fair way to talk to the daemon.
package struct LineFrameDecoder: ByteToMessageDecoder {
    /// One line, without its newline.
    package typealias InboundOut = ByteBuffer

    /// What a line longer than `maxLineBytes` does to the stream.
    package enum OverlongLine: Sendable {
        /// The decoder throws `LineTooLong`: the pipeline's `errorCaught` sees it and the
        /// connection ends. The client's choice: an answer it cannot read leaves every pending
        /// call without a trustworthy answer.
        case fail
        /// The decoder fires `LineTooLong` once as a user inbound event and from then on drops
        /// every byte unread, so a peer streaming an endless line cannot grow memory. The
        /// daemon's choice: it still answers the offending request (-32600) before it closes.
        case discardRest
    }

    /// Reports a line longer than `maxLineBytes` (thrown, or fired as a user inbound event,
    /// as `OverlongLine` says).
    package struct LineTooLong: Error, CustomStringConvertible, Sendable, Equatable {
        /// The bound that was passed.
        package let limit: Int
        /// Worded for the side that shows it: only the client and the gallery's relay (`.fail`)
        /// print it, and what they read comes from the daemon; the daemon answers its own
        /// -32600 instead.
        package var description: String { "a message from the daemon exceeded \(limit) bytes" }

        /// The report of a line past `limit`.
        package init(limit: Int) { self.limit = limit }
    }

    /// Longest accepted line, newline excluded.
    package let maxLineBytes: Int
    /// What an overlong line does.
    package let overlong: OverlongLine
    /// Bytes after the reader index already known to hold no newline.
    private var scanned = 0
    /// Set once a line was too long under `.discardRest`: every later byte is dropped unread.
    private var discarding = false

    /// A decoder of lines up to `maxLineBytes` long that treats a longer one as `overlong` says.
    package init(maxLineBytes: Int, overlong: OverlongLine) {
        self.maxLineBytes = maxLineBytes
        self.overlong = overlong
    }

    package mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if discarding {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        let view = buffer.readableBytesView
        let searchStart = view.index(view.startIndex, offsetBy: scanned)
        if let newline = view[searchStart...].firstIndex(of: UInt8(ascii: "\n")) {
            let length = view.distance(from: view.startIndex, to: newline)
            scanned = 0
            if length > maxLineBytes {
                try tooLong(context: context, buffer: &buffer)
                return .needMoreData
            }
            let line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            context.fireChannelRead(wrapInboundOut(line))
            return .continue
        }
        scanned = view.count
        if view.count > maxLineBytes {
            try tooLong(context: context, buffer: &buffer)
        }
        return .needMoreData
    }

    package mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if !discarding, seenEOF, buffer.readableBytes > 0 {
            let line = buffer.readSlice(length: buffer.readableBytes)!
            scanned = 0
            context.fireChannelRead(wrapInboundOut(line))
        }
        buffer.moveReaderIndex(to: buffer.writerIndex)
        return .needMoreData
    }

    private mutating func tooLong(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws {
        let report = LineTooLong(limit: maxLineBytes)
        switch overlong {
        case .fail:
            throw report
        case .discardRest:
            discarding = true
            buffer.moveReaderIndex(to: buffer.writerIndex)
            context.fireUserInboundEventTriggered(report)
        }
    }
}
