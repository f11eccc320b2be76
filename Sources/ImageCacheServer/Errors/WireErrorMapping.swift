import ImageCacheKit
import ImageCacheProtocol

/// The one place where an error thrown on a request's way becomes the wire's error object
/// (`{"code", "message", "data": {"kind", …}}`, docs/protocol.md "Errors").
///
/// The engine throws its modules' own errors (`ImagingError`, `TransferError`, `Cancellation`,
/// `ProviderError`, `SearchError`, `DownloadError`, `StorageError`, `PipelineError`,
/// `CacheWriteError`), each holding the facts as fields; this mapping picks the code from the
/// kind, fills `data` from the fields (`format`, `field`, `reason`…) and redacts every text
/// that leaves: a URL's secret parameters never reach a client, whoever built the message.
/// The server's own refusals (`ServerError`) are mapped here too, their texts as they are.
/// Answers to requests and the errors `prefetch.finished` reports get it through `Answer`,
/// the one place answers leave; the download jobs keep theirs in their records for
/// `download.status`.
public enum WireErrorMapping {
    /// The wire error for `error`; anything the mapping does not know is a bug, sent as
    /// `internal` without its text (`mapped` lets `Answer` log it first).
    public static func rpcError(for error: any Error) -> RPCError {
        mapped(error) as? RPCError ?? RPCError(.internal, "internal error")
    }

    /// The wire error for every error the mapping knows (the engine's, a task's
    /// `CancellationError`, the server's own `ServerError`, an `RPCError` already built);
    /// anything else is returned as it is, for `Answer` to log as unexpected and answer
    /// `internal`.
    public static func mapped(_ error: any Error) -> any Error {
        switch error {
        case let error as ServerError:
            // The server's words and the client's own (a method name, a photo id): redacted like
            // every text that leaves, since an id a client made up may carry a URL with a secret.
            return redacted(RPCError(error.kind, error.description, field: error.field, reason: error.reason))
        case let error as RPCError:
            return redacted(error)
        case let error as Cancellation:
            return redacted(RPCError(.cancelled, error.description, reason: error.reason))
        case is CancellationError:
            return mapped(Cancellation.request)
        case let error as TransferError:
            return redacted(RPCError(error.kind, error.description, status: error.status, body: error.body,
                                     retryAfter: error.retryAfter))
        case let error as ProviderError:
            return redacted(RPCError(error.kind, error.description, status: error.status, body: error.body,
                                     retryAfter: error.retryAfter))
        case let error as SearchError:
            return redacted(RPCError(error.kind, error.description, field: error.field))
        case let error as DownloadError:
            return redacted(RPCError(error.kind, error.description, field: error.field))
        case let error as ImagingError:
            return redacted(RPCError(error.kind, error.description, field: error.field, format: error.format?.rawValue))
        case let error as any EngineError:
            // PipelineError, CacheWriteError, StorageError: a kind and a message, no detail field.
            return redacted(RPCError(error.kind, error.description))
        default:
            return error
        }
    }

    /// `error` with its texts (message, upstream body excerpt) redacted: secret query
    /// parameters and user-info in any URL they quote (`URLRedaction`).
    static func redacted(_ error: RPCError) -> RPCError {
        var error = error
        error.message = URLRedaction.redact(text: error.message)
        error.data.body = error.data.body.map { URLRedaction.redact(text: $0) }
        return error
    }
}
