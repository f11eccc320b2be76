/// A JSON-RPC request id: the contract allows a string or an integer, nothing else.
///
/// Kept as the client sent it so the answer carries back exactly the same token.
public enum RequestID: Sendable, Hashable, Codable, CustomStringConvertible {
    case int(Int)
    case string(String)

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let i = try? c.decode(Int.self) { self = .int(i); return }
        if let s = try? c.decode(String.self) { self = .string(s); return }
        throw DecodingError.dataCorruptedError(in: c, debugDescription: "must be a string or an integer")
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .int(let i): try c.encode(i)
        case .string(let s): try c.encode(s)
        }
    }

    public var description: String {
        switch self {
        case .int(let i): return String(i)
        case .string(let s): return "\"\(s)\""
        }
    }
}
