/// Every error kind of docs/protocol.md's error table, with its JSON-RPC code.
///
/// One table shared by the daemon and its clients, so a code can never mean two things.
/// The engine's typed errors name their kind from it too (`EngineError`), so the server's one
/// mapping (`WireErrorMapping`) takes the code from here.
public enum ErrorKind: String, Sendable, Codable, CaseIterable, Hashable {
    case parseError = "parse_error"
    case invalidRequest = "invalid_request"
    case methodNotFound = "method_not_found"
    case invalidParams = "invalid_params"
    case `internal` = "internal"
    case queryTooShort = "query_too_short"
    case providerUnavailable = "provider_unavailable"
    case upstreamError = "upstream_error"
    case rateLimited = "rate_limited"
    case networkUnavailable = "network_unavailable"
    case notFound = "not_found"
    case cancelled = "cancelled"
    case decodeFailed = "decode_failed"
    case tooLarge = "too_large"
    case forbidden = "forbidden"
    case timeout = "timeout"
    case busy = "busy"
    /// The cache or a download folder cannot be written (full, read-only, gone): not a bug
    /// (`internal`) but the machine's state, which the user can fix.
    case storageUnavailable = "storage_unavailable"
    /// The item is not a photo (a video): it has no full image to save, and its still frame
    /// must not be saved in the photo's place.
    case notAPhoto = "not_a_photo"

    /// The numeric JSON-RPC error code of this kind.
    public var code: Int {
        switch self {
        case .parseError: return -32700
        case .invalidRequest: return -32600
        case .methodNotFound: return -32601
        case .invalidParams: return -32602
        case .internal: return -32603
        case .queryTooShort: return 1001
        case .providerUnavailable: return 1002
        case .upstreamError: return 1003
        case .rateLimited: return 1004
        case .networkUnavailable: return 1005
        case .notFound: return 1006
        case .cancelled: return 1007
        case .decodeFailed: return 1008
        case .tooLarge: return 1009
        case .forbidden: return 1010
        case .timeout: return 1011
        case .busy: return 1012
        case .storageUnavailable: return 1013
        case .notAPhoto: return 1014
        }
    }

    /// The kind for a numeric code, or nil when the code is not one of the contract's.
    public init?(code: Int) {
        guard let kind = ErrorKind.allCases.first(where: { $0.code == code }) else { return nil }
        self = kind
    }
}
