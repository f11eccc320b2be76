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
/// (docs/protocol.md, Framing and JSON-RPC): an object (never a batch), `"jsonrpc": "2.0"`, a string `method`, an `id`
/// that is a string or an integer, and no members JSON-RPC does not define.
///
/// `params` is kept as raw `JSONValue`; its shape is the handler's business (`-32602`).
enum IncomingMessageParser {
    /// nil for a blank line, which is skipped silently (a stray `\r\n` or an empty line typed
    /// into `socat` is not worth an error).
    static func parse(_ line: ByteBuffer, maxDepth: Int = JSONNesting.maximumDepth) -> Result<IncomingMessage, EnvelopeFailure>? {
        var blank = true
        let verdict = line.withUnsafeReadableBytes { raw -> JSONNesting.Verdict in
            blank = raw.allSatisfy(isJSONWhitespace)
            return JSONNesting.scan(raw, limit: maxDepth)
        }
        guard !blank else { return nil }
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
        let value: JSONValue
        do {
            value = try line.withUnsafeReadableBytes { (raw) throws(JSONLineParser.Malformed) -> JSONValue in
                try JSONLineParser.parse(raw)
            }
        } catch {
            return .failure(EnvelopeFailure(id: nil, error: RPCError(.parseError, "the line is not valid JSON")))
        }
        guard case .object(let members) = value else {
            if case .array = value {
                return .failure(EnvelopeFailure(id: nil, error: RPCError(
                    .invalidRequest, "batches are not supported: send one request object per line")))
            }
            return .failure(EnvelopeFailure(id: nil, error: RPCError(
                .invalidRequest, "a request must be a JSON object")))
        }
        let envelope = WireEnvelope(members)
        return envelope.validated()
    }

    private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}

/// The top-level members as they arrived, each checked for type, so that one bad member is
/// reported precisely and a good `id` is still echoed.
private struct WireEnvelope {
    var version: String?
    var versionInvalid = false
    var id: RequestID?
    var idInvalid = false
    var method: String?
    var methodInvalid = false
    var params: JSONValue?
    var unknownMember: String?

    init(_ members: [String: JSONValue]) {
        for (key, value) in members {
            switch key {
            case "jsonrpc":
                if case .string(let text) = value { version = text } else { versionInvalid = true }
            case "id":
                switch value {
                case .int(let number): id = .int(number)
                case .string(let text): id = .string(text)
                default: idInvalid = true
                }
            case "method":
                if case .string(let text) = value { method = text } else { methodInvalid = true }
            case "params":
                params = value
            default:
                // The first in key order, so the answer names the same member every time.
                if unknownMember.map({ key < $0 }) ?? true { unknownMember = key }
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
