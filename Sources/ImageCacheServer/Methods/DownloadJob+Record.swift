import Foundation
import ImageCacheKit
import ImageCacheProtocol

extension DownloadJob {
    /// A job as `download.status`, `download.watch` and `download.list` report it, from the
    /// engine's record (its live byte count already in it): the URL redacted, the times as
    /// ISO 8601 UTC, and why it failed in the wire's words (`WireErrorMapping`).
    init(_ record: DownloadRecord) {
        self.init(job: record.id, photo: record.photo, url: URLRedaction.redact(record.url), variant: record.variant,
                  state: record.state, path: record.reservation.path, received: record.received, total: record.total,
                  width: record.width, height: record.height,
                  error: record.error.map { WireErrorMapping.rpcError(for: $0) },
                  createdAt: Self.timestamp(record.createdAt), endedAt: record.endedAt.map(Self.timestamp))
    }

    /// ISO 8601 UTC with seconds, as the contract's timestamps.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!))
    }
}
