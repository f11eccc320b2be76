import ImageCacheKit
import ImageCacheProtocol

extension WireErrorMapping {
    /// The wire error of a download job's recorded failure (`download.status`, `download.list`,
    /// `download.watch` and `download.failed`): the object the error that ended the job maps
    /// to, whether the record was made by this daemon or read from a table an older one wrote.
    /// The engine keeps the failure's facts (`DownloadFailure`); the code follows from its
    /// kind here, and its texts are redacted once more on their way out.
    package static func rpcError(for failure: DownloadFailure) -> RPCError {
        redacted(RPCError(failure.kind, failure.message, field: failure.field, status: failure.status, body: failure.body,
                          retryAfter: failure.retryAfter, reason: failure.reason, format: failure.format))
    }
}
