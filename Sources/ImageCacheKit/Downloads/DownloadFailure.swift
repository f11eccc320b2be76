import ImageCacheProtocol

/// Why a download job ended without its file, as the job keeps it (in the job table too) for
/// `download.status`, `download.list` and its `download.failed`: the engine error's kind, its
/// message and the facts the wire's error object carries (`field`, `status`, `body`,
/// `retryAfter`, `reason`, `format`). The server turns it into the wire's error
/// (`WireErrorMapping.rpcError(for:)` of a failure); the engine never builds that itself.
///
/// Texts are redacted when the failure is made (a URL's secret parameters never reach the
/// table), and `retryAfter` is whole seconds, rounded up, as the wire says it.
///
/// On disk it has the wire error's shape, `{"code", "message", "data": {"kind", …}}`, key for
/// key in the same order: tables written before the engine kept its own failure load
/// unchanged, and an older daemon reads the tables this one writes.
package struct DownloadFailure: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What went wrong, one of the contract's kinds.
    package var kind: ErrorKind
    /// Text for a person, redacted.
    package var message: String
    /// The param at fault (`directory`, `filename`).
    package var field: String?
    /// The upstream HTTP status.
    package var status: Int?
    /// An excerpt of the upstream body, redacted.
    package var body: String?
    /// Whole seconds to wait before asking again, when the upstream said.
    package var retryAfter: Double?
    /// Why the job was cancelled (`cancelled`, `shutdown`).
    package var reason: String?
    /// The sniffed format of a body that did not decode.
    package var format: String?

    /// A failure from its facts (texts are redacted here).
    package init(_ kind: ErrorKind, _ message: String, field: String? = nil, status: Int? = nil, body: String? = nil,
                 retryAfter: Double? = nil, reason: String? = nil, format: String? = nil) {
        self.kind = kind
        self.message = URLRedaction.redact(text: message)
        self.field = field
        self.status = status
        self.body = body.map { URLRedaction.redact(text: $0) }
        self.retryAfter = retryAfter.flatMap(OutsideSeconds.clamped).map { $0.rounded(.up) }
        self.reason = reason
        self.format = format
    }

    /// The failure a job that ended with `error` keeps: the facts of the errors a download
    /// meets (a transfer's, the verifier's, the folder's, a cancellation); anything the engine
    /// does not know is a bug, kept as `internal` without its text.
    package init(_ error: any Error) {
        switch error {
        case let error as Cancellation:
            self.init(.cancelled, error.description, reason: error.reason)
        case is CancellationError:
            self.init(Cancellation.request)
        case let error as TransferError:
            self.init(error.kind, error.description, status: error.status, body: error.body, retryAfter: error.retryAfter)
        case let error as DownloadError:
            self.init(error.kind, error.description, field: error.field)
        case let error as ImagingError:
            self.init(error.kind, error.description, field: error.field, format: error.format?.rawValue)
        case let error as any EngineError:
            self.init(error.kind, error.description)
        default:
            self.init(.internal, "internal error")
        }
    }

    /// Whether the daemon's stop ended the run: the job stays unfinished, to resume.
    package var isShutdown: Bool { kind == .cancelled && reason == "shutdown" }

    /// As the wire's error prints itself, so the log lines read the same.
    package var description: String { "\(kind.rawValue) (\(kind.code)): \(message)" }

    // MARK: The table's shape

    private enum Keys: String, CodingKey { case code, message, data }
    private enum DataKeys: String, CodingKey { case kind, field, status, body, retryAfter, reason, format }

    /// Writes the wire error's keys in its order: `code` (from the kind), `message`, and
    /// `data` with `kind` and the facts present.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(kind.code, forKey: .code)
        try container.encode(message, forKey: .message)
        var data = container.nestedContainer(keyedBy: DataKeys.self, forKey: .data)
        try data.encode(kind, forKey: .kind)
        try data.encodeIfPresent(field, forKey: .field)
        try data.encodeIfPresent(status, forKey: .status)
        try data.encodeIfPresent(body, forKey: .body)
        try data.encodeIfPresent(retryAfter, forKey: .retryAfter)
        try data.encodeIfPresent(reason, forKey: .reason)
        try data.encodeIfPresent(format, forKey: .format)
    }

    /// Reads the fields as written (the kind names the code; the stored `code` is not needed),
    /// through the same rules as a failure made here: the table is a file anyone with the
    /// state folder's rights may have edited, so its texts are redacted and its `retryAfter`
    /// clamped again rather than trusted.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let data = try container.nestedContainer(keyedBy: DataKeys.self, forKey: .data)
        self.init(try data.decode(ErrorKind.self, forKey: .kind), try container.decode(String.self, forKey: .message),
                  field: try data.decodeIfPresent(String.self, forKey: .field),
                  status: try data.decodeIfPresent(Int.self, forKey: .status),
                  body: try data.decodeIfPresent(String.self, forKey: .body),
                  retryAfter: try data.decodeIfPresent(Double.self, forKey: .retryAfter),
                  reason: try data.decodeIfPresent(String.self, forKey: .reason),
                  format: try data.decodeIfPresent(String.self, forKey: .format))
    }
}
