import ImageCacheProtocol

/// What every error the engine throws can say about itself, whatever its module.
///
/// Each module throws its own typed error (`ImagingError`, `TransferError`, `Cancellation`,
/// `CacheWriteError`, `StorageError`, `ProviderError`, `SearchError`, `DownloadError`,
/// `PipelineError`) holding the facts of the failure as fields; the server turns it into the
/// wire's error object in one place (`WireErrorMapping` in ImageCacheServer). The engine still
/// needs the contract's *kind* of a failure for its own decisions (a retry, a download that
/// gives up, a metric's `outcome` label), so every engine error names it. The protocol is
/// the package's, not the engine's alone: the server's own refusals (a full prefetch queue, a
/// recycled slot: `ServerError` in ImageCacheServer) conform too, so the helpers below answer
/// for them the same way. The wire's `RPCError` is none of these: the engine never sees it.
package protocol EngineError: Error, Sendable, CustomStringConvertible {
    /// The contract's kind of this failure (docs/protocol.md, "Errors").
    var kind: ErrorKind { get }
}

/// The kind of any error met on the engine's paths: an engine error's own, `cancelled` for a
/// task's `CancellationError`, `internal` for anything else (a bug, not the outside's fault).
package func engineKind(of error: any Error) -> ErrorKind {
    if let error = error as? any EngineError { return error.kind }
    if error is CancellationError { return .cancelled }
    return .internal
}

/// Whether `error` says its request was cancelled (by the client, a newer request, a close or
/// the daemon's shutdown): such an end is never logged as a failure nor remembered.
package func isCancellation(_ error: any Error) -> Bool {
    engineKind(of: error) == .cancelled
}
