/// An error object as docs/protocol.md ("Errors") puts it on the wire:
/// `{"code": C, "message": "…", "data": {"kind": "…", …}}`.
///
/// The server builds it (from the engine's typed errors, in `WireErrorMapping`) and sends it;
/// the client rethrows it. Optional detail fields are omitted when nil.
public struct RPCError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The detail object of an error; `kind` is always present.
    public struct Details: Sendable, Hashable, Codable {
        /// What went wrong, one of the contract kinds; the code follows from it.
        public var kind: ErrorKind
        /// The offending param, for `invalid_params`.
        public var field: String?
        /// The upstream HTTP status, for `upstream_error`.
        public var status: Int?
        /// An excerpt of the upstream body (redacted), for `upstream_error`.
        public var body: String?
        /// Whole seconds to wait before retrying, for `rate_limited` (and a 5xx that sent
        /// `Retry-After`) when known: rounded up, so waiting that long is always enough.
        public var retryAfter: Double?
        /// Why a request was cancelled (`recycled`, `superseded`, `cancelled`, `session_closed`…).
        public var reason: String?
        /// The sniffed format, for `decode_failed`.
        public var format: String?

        public init(kind: ErrorKind, field: String? = nil, status: Int? = nil, body: String? = nil,
                    retryAfter: Double? = nil, reason: String? = nil, format: String? = nil) {
            self.kind = kind
            self.field = field
            self.status = status
            self.body = body
            self.retryAfter = retryAfter.flatMap(OutsideSeconds.clamped).map { $0.rounded(.up) }
            self.reason = reason
            self.format = format
        }
    }

    /// The JSON-RPC code of `kind`.
    public var code: Int
    /// Text for a person; never contains secrets.
    public var message: String
    /// `kind` and the detail fields that apply.
    public var data: Details

    /// The kind, read from `data`.
    public var kind: ErrorKind { data.kind }

    public init(_ kind: ErrorKind, _ message: String, field: String? = nil, status: Int? = nil,
                body: String? = nil, retryAfter: Double? = nil, reason: String? = nil, format: String? = nil) {
        self.code = kind.code
        self.message = message
        self.data = Details(kind: kind, field: field, status: status, body: body,
                            retryAfter: retryAfter, reason: reason, format: format)
    }

    public var description: String { "\(data.kind.rawValue) (\(code)): \(message)" }
}
