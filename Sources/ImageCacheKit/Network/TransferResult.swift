/// Where a finished body lives: small bodies stay in memory, large ones were streamed to a file
/// so memory does not grow with image size (docs/protocol.md, "Limits").
public enum TransferBody: Sendable, Equatable {
    case memory([UInt8])
    /// A file holding the body: a resumed download's own file, the caller's to move into
    /// place; or one of the engine's spill files, which the caller hands back with
    /// `TransferEngine.release` once done with it (it is emptied and reused).
    case file(path: String, size: Int)

    /// The body's length in bytes.
    public var count: Int {
        switch self {
        case .memory(let bytes): return bytes.count
        case .file(_, let size): return size
        }
    }

    /// Runs `body` over the body's bytes: those in memory, or its file's mapped for the call
    /// (`WholeFile.withMapped`: no copy, no heap buffer, and nothing held while a body waits
    /// between calls). Throws what `body` throws, or a `StorageError` when the file cannot be
    /// opened or mapped.
    func withBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws -> T {
        switch self {
        case .memory(let bytes):
            return try withRawBytes(bytes, body)
        case .file(let path, _):
            return try WholeFile.withMapped(path, what: "the downloaded body", body)
        }
    }
}

/// A completed transfer: the final answer after redirects and retries.
public struct TransferResult: Sendable {
    /// The status of the final response (206 when a resume appended to the partial file).
    public var status: Int
    /// The final response's headers (ETag, Content-Type…), as received.
    public var headers: [(String, String)]
    /// The body, in memory or in a file the caller now owns.
    public var body: TransferBody
    /// The URL that answered, after redirects (redact before showing it).
    package var finalURL: String
    /// How many HTTP requests it took (1 plus retries plus redirect hops).
    public var requests: Int
    /// The HTTP version of the final response as libcurl negotiated it: "1.0", "1.1", "2" or
    /// "3" ("" when unknown). The engine asks for HTTP/2 over TLS (one connection carries every
    /// transfer to a host, and a cancel resets one stream instead of closing a connection), so
    /// this says whether the server agreed.
    package var httpVersion: String = ""
    /// Whether the engine counts this body until `TransferEngine.release` (its request's
    /// `awaitsRelease`).
    package var awaitsRelease = false

    /// The value of the last header with this name (case-insensitive).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.last { $0.0.lowercased() == lower }?.1
    }
}
