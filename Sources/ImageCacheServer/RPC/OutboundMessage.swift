import Foundation
import ImageCacheKit
import NIOCore

/// How much a message matters when its client reads slowly (docs/protocol.md, Sessions): progress may be
/// dropped, everything else must arrive or the connection must end.
public enum OutboundPriority: Sendable, Hashable {
    /// A response: never dropped.
    case response
    /// A notification the client relies on (`*.finished`, `*.failed`, dimensions…): never dropped.
    case essential
    /// A `*.progress` notification: superseded by the next one, so it may be dropped.
    case progress

    /// The class of a notification, by the contract's naming rule: a method ending in
    /// `.progress` is droppable; every other notification is not.
    static func forNotification(method: String) -> OutboundPriority {
        method.hasSuffix(".progress") ? .progress : .essential
    }
}

/// One encoded line on its way to a client, with the class the slow-reader policy needs.
struct OutboundMessage: Sendable {
    /// The line (or, with `rest`, its beginning).
    var bytes: ByteBuffer
    var priority: OutboundPriority
    /// More of the line, when it is a sealed file's content: its first `restCount` bytes are
    /// sent with `sendfile` after `bytes`, without copying them (a hot inline thumbnail's
    /// base64, and the line's end when the file holds this line's).
    var rest: SealedMemoryFile? = nil
    /// How many of `rest`'s first bytes belong to the line; nil for all of them.
    var restCount: Int? = nil
    /// The line's end after `rest`, when the file does not hold it.
    var tail: ByteBuffer? = nil

    /// Bytes of `rest` sent.
    var restBytes: Int { rest.map { restCount ?? $0.count } ?? 0 }

    /// Bytes in the whole line.
    var size: Int { bytes.readableBytes + restBytes + (tail?.readableBytes ?? 0) }
}

/// Encodes the daemon's messages into NDJSON lines.
///
/// A result is encoded straight from the handler's typed value (no intermediate
/// `JSONValue`), which keeps a trivial round trip cheap. Foundation's encoder never emits a
/// raw newline (control characters in strings are escaped), so a line is one message.
enum MessageEncoder {
    /// One encoder for every message (Foundation's encoder is Sendable and keeps no state
    /// between calls); slashes unescaped so paths and URLs read naturally.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()


    private static func line(_ data: Data) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(data.count + 1)
        buffer.writeBytes(data)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }

    /// The success response for `id`. Throws only when the result cannot be encoded
    /// (a non-finite number, say); `answer` answers -32603 then.
    ///
    /// The envelope is written by hand around the encoded result (it is three fixed members).
    static func success<R: Encodable>(id: RequestID, result: R) throws -> OutboundMessage {
        let resultBytes = try encoder.encode(result)
        return success(id: id, resultBound: resultBytes.count) { writer in
            resultBytes.withUnsafeBytes { writer.raw($0) }
        }
    }

    /// The success response for `id` around a result encoded earlier, spliced in as it is.
    static func success<R: Encodable>(id: RequestID, encoded: EncodedResult<R>) -> OutboundMessage {
        success(id: id, resultBound: encoded.bytes.count) { writer in
            encoded.bytes.withUnsafeBytes { writer.raw($0) }
        }
    }

    /// The success response for `id` around a result that `writeResult` writes as JSON text
    /// itself (one value, no raw newline), in at most `resultBound` bytes: a large hand-written
    /// answer is then copied once, into the buffer that goes to the socket.
    ///
    /// With `rest`, `writeResult` stops where that file's content begins; the line goes on
    /// with the file's first `restCount` bytes (sent without a copy), then `tail` when the
    /// file does not hold the line's end (`lineEnd(afterResult:)`).
    static func success(id: RequestID, resultBound: Int, rest: SealedMemoryFile? = nil, restCount: Int? = nil,
                        tail: ByteBuffer? = nil, writingResult writeResult: (inout JSONWriter) -> Void) -> OutboundMessage {
        let idBound: Int
        switch id {
        case .int: idBound = JSONWriter.intBound
        case .string(let text): idBound = JSONWriter.stringBound(text)
        }
        var buffer = ByteBuffer()
        buffer.writeJSON(bound: 40 + idBound + resultBound) { writer in
            writer.raw(#"{"jsonrpc":"2.0","id":"#)
            switch id {
            case .int(let number): writer.int(number)
            case .string(let text): writer.string(text)
            }
            writer.raw(#","result":"#)
            writeResult(&writer)
            if rest == nil { writer.raw("}\n") }
        }
        return OutboundMessage(bytes: buffer, priority: .response, rest: rest, restCount: restCount, tail: tail)
    }

    /// The end of a success line from where a result stops being written by `writeResult`
    /// (the rest of the result, then the envelope's close and the newline): what follows an
    /// inline answer's data, as this encoder writes it.
    static func lineEnd(afterResult writeResult: (inout JSONWriter) -> Void, bound: Int = 64) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeJSON(bound: bound + 2) { writer in
            writeResult(&writer)
            writer.raw("}\n")
        }
        return buffer
    }

    /// The error response for `id` (null when the request's id could not be read).
    static func failure(id: RequestID?, error: RPCError) -> OutboundMessage {
        do {
            let data = try encoder.encode(RPCResponse(id: id, error: error))
            return OutboundMessage(bytes: line(data), priority: .response)
        } catch {
            // An RPCError holds only strings and finite numbers; this cannot fail, but if it
            // ever did the client must still get an answer.
            var buffer = ByteBuffer()
            buffer.writeString(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error","data":{"kind":"internal"}}}"#)
            buffer.writeString("\n")
            return OutboundMessage(bytes: buffer, priority: .response)
        }
    }

    /// A notification whose params write their JSON themselves (`JSONWritable`), straight
    /// into the line's buffer.
    static func notification<P: RPCNotificationPayload & JSONWritable>(_ params: P) -> OutboundMessage {
        let method = P.name.rawValue
        var buffer = ByteBuffer()
        buffer.writeJSON(bound: 48 + JSONWriter.stringBound(method) + params.jsonBound) { writer in
            writer.raw(#"{"jsonrpc":"2.0","method":"#)
            writer.string(method)
            writer.raw(#","params":"#)
            params.writeJSON(to: &writer)
            writer.raw("}\n")
        }
        return OutboundMessage(bytes: buffer, priority: .forNotification(method: method))
    }

    /// A notification from the daemon.
    static func notification<P: Encodable>(method: String, params: P) throws -> OutboundMessage {
        let data = try encoder.encode(NotificationEnvelope(method: method, params: params))
        return OutboundMessage(bytes: line(data), priority: .forNotification(method: method))
    }
}

private struct NotificationEnvelope<P: Encodable>: Encodable {
    let method: String
    let params: P
    enum CodingKeys: String, CodingKey { case jsonrpc, method, params }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode("2.0", forKey: .jsonrpc)
        try c.encode(method, forKey: .method)
        try c.encode(params, forKey: .params)
    }
}
