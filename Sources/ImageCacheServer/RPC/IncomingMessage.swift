import Foundation
import NIOCore

/// A line that passed every JSON-RPC 2.0 check and can be dispatched.
enum IncomingMessage: Sendable {
    /// Carries an id: answered exactly once.
    case request(id: RequestID, method: String, params: JSONValue?)
    /// No id: carried out, never answered (JSON-RPC notification).
    case notification(method: String, params: JSONValue?)
}

/// A line that must be answered with an error instead of being dispatched. `id` is the
/// request's id when it could be read, so the client can match the answer; null otherwise
/// (JSON-RPC 2.0 §5).
struct EnvelopeFailure: Error, Sendable {
    var id: RequestID?
    var error: RPCError
}

/// Turns one NDJSON line into an `IncomingMessage`, enforcing the contract's transport rules
/// (CONTRACT §2): an object (never a batch), `"jsonrpc": "2.0"`, a string `method`, an `id`
/// that is a string or an integer, and no members JSON-RPC does not define.
///
/// `params` is kept as raw `JSONValue`; its shape is the handler's business (`-32602`).
enum IncomingMessageParser {
    /// nil for a blank line, which is skipped silently (a stray `\r\n` or an empty line typed
    /// into `socat` is not worth an error).
    static func parse(_ line: ByteBuffer, maxDepth: Int = JSONNesting.maximumDepth) -> Result<IncomingMessage, EnvelopeFailure>? {
        var firstByte: UInt8?
        let verdict = line.withUnsafeReadableBytes { raw -> JSONNesting.Verdict in
            firstByte = raw.first(where: { !isJSONWhitespace($0) })
            return JSONNesting.scan(raw, limit: maxDepth)
        }
        guard let firstByte else { return nil }
        switch verdict {
        case .acceptable:
            break
        case .tooDeep:
            return .failure(EnvelopeFailure(id: nil, error: RPCError(
                .invalidRequest, "the request nests deeper than \(maxDepth) levels")))
        case .controlCharacterInString:
            return .failure(EnvelopeFailure(id: nil, error: RPCError(
                .parseError, "the line is not valid JSON: a control character inside a string must be escaped")))
        }
        let envelope: WireEnvelope
        do {
            envelope = try MessageEncoder.decoder.decode(WireEnvelope.self, from: Data(line.readableBytesView))
        } catch DecodingError.typeMismatch {
            if firstByte == UInt8(ascii: "[") {
                return .failure(EnvelopeFailure(id: nil, error: RPCError(
                    .invalidRequest, "batches are not supported: send one request object per line")))
            }
            return .failure(EnvelopeFailure(id: nil, error: RPCError(
                .invalidRequest, "a request must be a JSON object")))
        } catch {
            return .failure(EnvelopeFailure(id: nil, error: RPCError(.parseError, "the line is not valid JSON")))
        }
        return envelope.validated()
    }

    private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}

/// The top-level members as they arrived, each checked for type without throwing, so that
/// one bad member is reported precisely and a good `id` is still echoed.
private struct WireEnvelope: Decodable {
    var version: String?
    var versionInvalid = false
    var id: RequestID?
    var idInvalid = false
    var method: String?
    var methodInvalid = false
    var params: JSONValue?
    var unknownMember: String?

    struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: MemberKey.self)
        for key in members.allKeys {
            switch key.stringValue {
            case "jsonrpc":
                version = try? members.decode(String.self, forKey: key)
                versionInvalid = version == nil
            case "id":
                if let number = try? members.decode(Int.self, forKey: key) {
                    id = .int(number)
                } else if let text = try? members.decode(String.self, forKey: key) {
                    id = .string(text)
                } else {
                    idInvalid = true
                }
            case "method":
                method = try? members.decode(String.self, forKey: key)
                methodInvalid = method == nil
            case "params":
                params = try members.decode(JSONValue.self, forKey: key)
            default:
                unknownMember = key.stringValue
            }
        }
    }

    func validated() -> Result<IncomingMessage, EnvelopeFailure> {
        func failure(_ message: String, keepID: Bool = true) -> Result<IncomingMessage, EnvelopeFailure> {
            .failure(EnvelopeFailure(id: keepID ? id : nil, error: RPCError(.invalidRequest, message)))
        }
        if idInvalid { return failure("\"id\" must be a string or an integer", keepID: false) }
        if versionInvalid || version == nil { return failure("\"jsonrpc\" must be \"2.0\"") }
        if version != "2.0" { return failure("\"jsonrpc\" must be \"2.0\"") }
        if methodInvalid { return failure("\"method\" must be a string") }
        guard let method else { return failure("\"method\" is missing") }
        if let unknownMember { return failure("unknown member \"\(unknownMember)\" in the request object") }
        if let id { return .success(.request(id: id, method: method, params: params)) }
        return .success(.notification(method: method, params: params))
    }
}
