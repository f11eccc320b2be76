import LineFraming
import NIOCore
import NIOEmbedded
import Testing

/// The one line decoder of both ends of the daemon's socket: lines split across reads and
/// joined in one, a final line without its newline, `\r` kept, and the two answers to an
/// overlong line (the daemon's: report once and drop the rest; the client's: fail).
@Suite("Line frame decoder", .timeLimit(.minutes(1)))
struct LineFrameDecoderTests {
    /// Records the user inbound events that reach the end of the pipeline.
    final class EventRecorder: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        var tooLong: [LineFrameDecoder.LineTooLong] = []

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? LineFrameDecoder.LineTooLong { tooLong.append(event) }
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// An embedded channel with the decoder and a recorder behind it.
    private func channel(limit: Int, overlong: LineFrameDecoder.OverlongLine) throws -> (EmbeddedChannel, EventRecorder) {
        let channel = EmbeddedChannel()
        let recorder = EventRecorder()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLineBytes: limit, overlong: overlong)))
        try channel.pipeline.syncOperations.addHandler(recorder)
        return (channel, recorder)
    }

    private func write(_ channel: EmbeddedChannel, _ text: String) throws {
        try channel.writeInbound(ByteBuffer(string: text))
    }

    /// Every line decoded so far, as text.
    private func lines(_ channel: EmbeddedChannel) throws -> [String] {
        var lines: [String] = []
        while let line = try channel.readInbound(as: ByteBuffer.self) { lines.append(String(buffer: line)) }
        return lines
    }

    @Test("a line split across many reads is one line; several lines in one read are several", arguments: [
        LineFrameDecoder.OverlongLine.fail, .discardRest,
    ])
    func splitAndJoined(overlong: LineFrameDecoder.OverlongLine) throws {
        let (channel, _) = try channel(limit: 64, overlong: overlong)
        for byte in #"{"id":1}"# { try write(channel, String(byte)) }
        #expect(try lines(channel).isEmpty)
        try write(channel, "\n{\"id\":2}\n{\"id\":3}\n{\"id\"")
        #expect(try lines(channel) == [#"{"id":1}"#, #"{"id":2}"#, #"{"id":3}"#])
        try write(channel, ":4}\n\n")
        #expect(try lines(channel) == [#"{"id":4}"#, ""])
        _ = try channel.finish()
    }

    @Test("a CRLF line keeps its \\r: only \\n ends a line")
    func carriageReturnKept() throws {
        let (channel, _) = try channel(limit: 64, overlong: .discardRest)
        try write(channel, "{}\r\n{\"a\":1}\r")
        try write(channel, "\n")
        #expect(try lines(channel) == ["{}\r", "{\"a\":1}\r"])
        _ = try channel.finish()
    }

    @Test("at end of input a last line without its newline is still a line")
    func lastLineWithoutNewline() throws {
        let (channel, _) = try channel(limit: 64, overlong: .fail)
        try write(channel, "one\ntwo")
        #expect(try lines(channel) == ["one"])
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try lines(channel) == ["two"])
        _ = try channel.finish()
    }

    @Test("a line of exactly the limit passes; one byte more does not", arguments: [
        LineFrameDecoder.OverlongLine.fail, .discardRest,
    ])
    func limitIsInclusive(overlong: LineFrameDecoder.OverlongLine) throws {
        let (channel, recorder) = try channel(limit: 8, overlong: overlong)
        try write(channel, String(repeating: "a", count: 8) + "\n")
        #expect(try lines(channel) == ["aaaaaaaa"])
        #expect(recorder.tooLong.isEmpty)
        if overlong == .fail {
            #expect(throws: LineFrameDecoder.LineTooLong(limit: 8)) {
                try write(channel, String(repeating: "b", count: 9) + "\n")
            }
        } else {
            try write(channel, String(repeating: "b", count: 9) + "\n")
            #expect(recorder.tooLong == [LineFrameDecoder.LineTooLong(limit: 8)])
        }
        #expect(try lines(channel).isEmpty)
        _ = try? channel.finish()
    }

    @Test(".discardRest reports an overlong line once, after the lines before it, and drops every later byte")
    func discardRest() throws {
        let (channel, recorder) = try channel(limit: 16, overlong: .discardRest)
        try write(channel, "first\n" + String(repeating: "x", count: 10))
        #expect(try lines(channel) == ["first"])
        #expect(recorder.tooLong.isEmpty)
        // No newline yet: the bound is passed before the line ends, and nothing more is held.
        try write(channel, String(repeating: "x", count: 10))
        #expect(recorder.tooLong == [LineFrameDecoder.LineTooLong(limit: 16)])
        try write(channel, "x\nsecond\nthird")
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try lines(channel).isEmpty)
        #expect(recorder.tooLong.count == 1)
        _ = try channel.finish()
    }

    @Test(".discardRest: an overlong line whose newline is in the same read is reported too")
    func discardRestWholeLine() throws {
        let (channel, recorder) = try channel(limit: 4, overlong: .discardRest)
        try write(channel, "ok\ntoo long\nlater\n")
        #expect(try lines(channel) == ["ok"])
        #expect(recorder.tooLong == [LineFrameDecoder.LineTooLong(limit: 4)])
        _ = try channel.finish()
    }

    @Test(".fail throws LineTooLong as soon as the bound is passed, newline or not")
    func fail() throws {
        let (channel, recorder) = try channel(limit: 16, overlong: .fail)
        try write(channel, "first\n" + String(repeating: "x", count: 16))
        #expect(try lines(channel) == ["first"])
        #expect(throws: LineFrameDecoder.LineTooLong(limit: 16)) {
            try write(channel, "x")
        }
        #expect(recorder.tooLong.isEmpty)
        #expect(try lines(channel).isEmpty)
        _ = try? channel.finish()
    }

    @Test("the error names the bound")
    func description() {
        #expect(String(describing: LineFrameDecoder.LineTooLong(limit: 1024)) == "a message from the daemon exceeded 1024 bytes")
    }
}
